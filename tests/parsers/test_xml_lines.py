"""Line numbers of ``parsers.xmlutil.parse_xml``: every element knows the line of its start tag.

The documents are written here with the expected line of each element counted by
hand.  They exercise what the fast path (start tags found by a scan of the text)
must step over - comments and CDATA holding tag-like text, processing
instructions, ``>`` inside attribute values, a tag spread over several lines -
and what it hands to the line-tracking parser (a DOCTYPE whose entity expands
into elements, a UTF-16 file, too deep a nesting, a syntax error).
"""

import gc

import pytest

from mbcompose.parsers import InputError, limits
from mbcompose.parsers.xmlutil import _parse_fast, parse_xml

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

#: (tag, name or None, line) in document order, counted by hand from TRICKY
TRICKY_LINES = [("robot", "r", 2), ("link", "a", 4), ("visual", None, 4), ("geometry", None, 4),
                ("box", None, 4), ("link", "b", 6), ("data", None, 8), ("joint", "j", 9),
                ("parent", None, 9), ("child", None, 9)]


def _lines(root):
    return [(el.tag, el.get("name"), el.line) for el in root.iter()]


def test_lines_of_every_element_past_comments_cdata_and_instructions():
    root = parse_xml("tricky.urdf", TRICKY)
    assert _lines(root) == TRICKY_LINES
    assert all(el.file == "tricky.urdf" for el in root.iter())
    assert root.find("data").text.strip() == '<link name="cdata">'
    # and it was the scan of the start tags, not the line-tracking parser, that found them
    assert _lines(_parse_fast(TRICKY.encode(), "tricky.urdf")) == TRICKY_LINES


def test_doctype_entities_that_expand_into_elements_keep_their_lines():
    text = ('<?xml version="1.0"?>\n<!DOCTYPE robot [\n  <!ENTITY box \'<box size="1 2 3"/>\'>\n]>\n'
            '<robot name="r">\n  <geometry>&box;</geometry>\n  <link name="a"/>\n</robot>\n')
    root = parse_xml("doctype.urdf", text)
    # the entity's <box> is reported where it is used (line 6), and <link> stays on line 7
    assert _lines(root) == [("robot", "r", 5), ("geometry", None, 6), ("box", None, 6), ("link", "a", 7)]


def test_utf16_document_has_the_same_lines():
    data = TRICKY.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>').encode("utf-16")
    assert _lines(parse_xml("tricky16.urdf", data)) == TRICKY_LINES


def test_too_deep_nesting_is_refused_at_the_line_of_the_first_element_too_deep():
    depth = 12
    text = "\n".join(["<robot name='r'>"] + ["<a>"] * (depth - 1) + ["</a>"] * (depth - 1) + ["</robot>"])
    with limits.using(limits.checked_limits({"nesting_depth": depth - 1})):
        with pytest.raises(InputError) as err:
            parse_xml("deep.urdf", text)
    assert err.value.line == depth and "nesting depth" in err.value.message
    with limits.using(limits.checked_limits({"nesting_depth": depth})):
        assert parse_xml("deep.urdf", text).line == 1


def test_syntax_error_names_the_line_and_the_collector_is_left_running():
    assert gc.isenabled()
    with pytest.raises(InputError) as err:
        parse_xml("bad.urdf", "<robot name='r'>\n  <link name='a'>\n</robot>\n")
    assert err.value.line == 3 and "mismatched tag" in err.value.message
    assert gc.isenabled()
