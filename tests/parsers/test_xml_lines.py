"""``parsers.xml.parse_xml`` (lxml): the line and the file of every element, what the tree holds,
and what the parser refuses.

The documents are written here with the expected line of each element counted by hand.
libxml2 gives an element the line on which its start tag ends: the line of ``<`` for a tag
on one line, the last line of a tag spread over several.
"""

import gc
import pickle

import pytest

from mbcompose.parsers import InputError, Source, limits
from mbcompose.parsers.xml import (PARSER_MAX_DEPTH, XML_BASE, file_of, line_of, mark_file, new_element, parse_xml,
                                   where)

TRICKY = """<?xml version="1.0"?>
<robot name="r">
  <!-- <link name="not_a_link"> inside a comment -->
  <link name="a"><visual><geometry><box size="1 1 1"/></geometry></visual></link>
  <?pi <joint name="x"/> ?>
  <link
     name="b" note="a > b"/>
  <data><![CDATA[ <link name="cdata"> ]]></data>
  <joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>
</robot>
"""

#: (tag, name or None, line) in document order, counted by hand from TRICKY (link b: its tag ends on line 7)
TRICKY_LINES = [("robot", "r", 2), ("link", "a", 4), ("visual", None, 4), ("geometry", None, 4),
                ("box", None, 4), ("link", "b", 7), ("data", None, 8), ("joint", "j", 9),
                ("parent", None, 9), ("child", None, 9)]


def _lines(root):
    return [(el.tag, el.get("name"), line_of(el)) for el in root.iter()]


def test_lines_of_every_element_past_comments_cdata_and_instructions():
    root = parse_xml("tricky.urdf", TRICKY)
    assert _lines(root) == TRICKY_LINES
    assert all(file_of(el) == "tricky.urdf" for el in root.iter())
    assert root.find("data").text.strip() == '<link name="cdata">'


def test_the_tree_holds_elements_only():
    """Comments and processing instructions are not nodes of the tree, nor is whitespace between
    elements text: the readers iterate children without skipping anything."""
    root = parse_xml("tricky.urdf", TRICKY)
    assert [c.tag for c in root] == ["link", "link", "data", "joint"]
    assert all(isinstance(el.tag, str) for el in root.iter())
    assert root.text is None and root[0].tail is None


def test_a_file_is_read_with_its_name_and_a_document_with_a_long_file_keeps_big_line_numbers(tmp_path):
    path = tmp_path / "big lines.urdf"
    path.write_text("<robot name='r'>" + "\n" * 70_000 + "<link name='far'/></robot>")
    root = parse_xml(path)
    assert line_of(root[0]) == 70_001 and file_of(root[0]) == str(path)


def test_utf16_latin1_and_odd_declarations_read_as_expat_reads_them():
    utf16 = TRICKY.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>').encode("utf-16")
    assert _lines(parse_xml("tricky16.urdf", utf16)) == TRICKY_LINES
    # an encoding name Python knows and libxml2 does not; a version tinyxml2 and expat accept
    latin = '<?xml version="0.0" encoding="latin-1"?>\n<robot name="caf\xe9"/>\n'.encode("latin-1")
    root = parse_xml("latin.urdf", latin)
    assert root.get("name") == "caf\xe9" and line_of(root) == 2
    # blank lines before the declaration keep the lines after it
    assert line_of(parse_xml("blank.urdf", '\n\n<?xml version="1.0"?>\n<robot name="r"/>')) == 4


def test_an_undeclared_namespace_prefix_is_kept_in_the_name():
    root = parse_xml("x.urdf", "<robot name='r'>\n<gz:plugin name='p'/>\n</robot>")
    assert root[0].tag == "gz:plugin" and line_of(root[0]) == 2


@pytest.mark.parametrize("text, line", [
    # an internal entity that would expand into elements
    ('<?xml version="1.0"?>\n<!DOCTYPE robot [\n  <!ENTITY box \'<box size="1 2 3"/>\'>\n]>\n'
     '<robot name="r"><geometry>&box;</geometry></robot>\n', 2),
    # an external entity (never fetched)
    ('<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY x SYSTEM "/etc/hostname">]>\n<robot name="r">&x;</robot>\n', 2)])
def test_entities_are_refused_not_expanded(text, line):
    with pytest.raises(InputError) as err:
        parse_xml("entity.urdf", text)
    assert err.value.line == line and err.value.file == "entity.urdf"
    assert "entit" in err.value.message


def test_an_entity_bomb_is_refused_quickly():
    bomb = ('<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
            + "".join(f'<!ENTITY {c} "{("&" + p + ";") * 10}">' for p, c in zip("abcdefgh", "bcdefghi"))
            + ']>\n<robot name="&i;"/>\n')
    with pytest.raises(InputError) as err:
        parse_xml("bomb.urdf", bomb)
    assert err.value.file == "bomb.urdf" and err.value.line is not None


def test_too_deep_nesting_is_refused_at_the_line_of_the_first_element_too_deep():
    depth = 12
    text = "\n".join(["<robot name='r'>"] + ["<a>"] * (depth - 1) + ["</a>"] * (depth - 1) + ["</robot>"])
    with limits.using(limits.checked_limits({"nesting_depth": depth - 1})):
        with pytest.raises(InputError) as err:
            parse_xml("deep.urdf", text)
    assert err.value.line == depth and "nesting_depth" in err.value.message
    with limits.using(limits.checked_limits({"nesting_depth": depth})):
        assert line_of(parse_xml("deep.urdf", text)) == 1


def test_nesting_deeper_than_libxml2_reads_is_refused_at_the_first_element_too_deep():
    """libxml2 stops at its own bound; the message names ours and the line of the first element
    past it, as for a document it reads."""
    text = "<robot name='r'>\n" + "<a>\n" * 400 + "</a>" * 400 + "</robot>"
    with pytest.raises(InputError) as err:
        parse_xml("deep.urdf", text)
    limit = limits.active().nesting_depth
    assert err.value.line == limit + 1 and "nesting_depth" in err.value.message
    with limits.using(limits.checked_limits({"nesting_depth": 1000})):
        with pytest.raises(InputError, match=str(PARSER_MAX_DEPTH)):
            parse_xml("deep.urdf", text)


def test_syntax_error_names_the_line_in_expats_words_and_the_collector_is_left_running():
    assert gc.isenabled()
    with pytest.raises(InputError) as err:
        parse_xml("bad.urdf", "<robot name='r'>\n  <link name='a'>\n</robot>\n")
    assert err.value.line == 3 and "XML syntax error: mismatched tag" in err.value.message
    assert gc.isenabled()
    # the errors of an earlier document are not this one's
    with pytest.raises(InputError, match="unclosed token|no element found"):
        parse_xml("worse.urdf", "<robot name='r'>\n<link\n")


def test_spliced_and_written_elements_keep_their_file_and_line():
    main = parse_xml("main.xml", "<mujoco>\n<worldbody>\n</worldbody>\n</mujoco>")
    part = parse_xml("/models/part.xml", "<mujoco>\n\n<body name='b'>\n<geom/>\n</body>\n</mujoco>")
    body = part[0]
    main[0].append(mark_file(body, file_of(body)))
    assert (file_of(body), line_of(body)) == ("/models/part.xml", 3)
    assert (file_of(body[0]), line_of(body[0])) == ("/models/part.xml", 4)
    assert body.get(XML_BASE) == "/models/part.xml" and file_of(main[0]) == "main.xml"
    frame = new_element("frame", {"pos": "0 0 1"}, like=body[0])
    main[0].append(frame)
    assert (file_of(frame), line_of(frame), str(where(frame))) == ("/models/part.xml", 4, "/models/part.xml:4")


def test_a_source_is_a_file_and_a_line_and_pickles_with_them():
    root = parse_xml("tricky.urdf", TRICKY)
    source = Source("tricky.urdf", line_of(root.find("joint")), "joint j")
    del root
    assert source.line == 9 and str(source) == "joint j (tricky.urdf:9)"
    copy = pickle.loads(pickle.dumps(source))
    assert copy == source == Source("tricky.urdf", 9, "joint j") and hash(copy) == hash(source)
    with pytest.raises(AttributeError):
        source.line = 3


def test_an_error_in_a_urdf_names_the_line_of_its_element():
    text = TRICKY.replace('<box size="1 1 1"/>', '<box size="1 1 x"/>')
    from mbcompose.parsers.urdf.reader import read_urdf
    with pytest.raises(InputError) as err:
        read_urdf("tricky.urdf", text=text)
    assert (err.value.file, err.value.line) == ("tricky.urdf", 4) and "box@size" in err.value.message
