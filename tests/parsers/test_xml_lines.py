"""Line numbers of ``parsers.xmltree.parse_xml``: every element knows the line of its start tag,
whether the tree carries them (attached) or finds them when first asked (on demand).

The documents are written here with the expected line of each element counted by
hand.  They exercise what the fast path (start tags found by a scan of the text)
must step over - comments and CDATA holding tag-like text, processing
instructions, ``>`` inside attribute values, a tag spread over several lines -
and what it hands to the line-tracking parser (a DOCTYPE whose entity expands
into elements, a UTF-16 file, too deep a nesting, a syntax error).
"""

import gc
import pickle

import pytest

from mbcompose.parsers import InputError, Source, limits
from mbcompose.parsers import xmltree
from mbcompose.parsers.xmltree import _parse_fast, file_of, line_of, line_refs, parse_xml

MODES = pytest.mark.parametrize("on_demand", [False, True], ids=["attached", "on_demand"])

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
    return [(el.tag, el.get("name"), line_of(el)) for el in root.iter()]


@MODES
def test_lines_of_every_element_past_comments_cdata_and_instructions(on_demand):
    root = parse_xml("tricky.urdf", TRICKY, on_demand_lines=on_demand)
    assert _lines(root) == TRICKY_LINES
    assert all(file_of(el) == "tricky.urdf" for el in root.iter())
    assert root.find("data").text.strip() == '<link name="cdata">'
    # and it was the scan of the start tags, not the line-tracking parser, that found them
    assert _lines(_parse_fast(TRICKY.encode(), "tricky.urdf")) == TRICKY_LINES


@MODES
def test_doctype_entities_that_expand_into_elements_keep_their_lines(on_demand):
    text = ('<?xml version="1.0"?>\n<!DOCTYPE robot [\n  <!ENTITY box \'<box size="1 2 3"/>\'>\n]>\n'
            '<robot name="r">\n  <geometry>&box;</geometry>\n  <link name="a"/>\n</robot>\n')
    root = parse_xml("doctype.urdf", text, on_demand_lines=on_demand)
    # the entity's <box> is reported where it is used (line 6), and <link> stays on line 7
    assert _lines(root) == [("robot", "r", 5), ("geometry", None, 6), ("box", None, 6), ("link", "a", 7)]


@MODES
def test_utf16_document_has_the_same_lines(on_demand):
    data = TRICKY.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>').encode("utf-16")
    assert _lines(parse_xml("tricky16.urdf", data, on_demand_lines=on_demand)) == TRICKY_LINES


@MODES
def test_too_deep_nesting_is_refused_at_the_line_of_the_first_element_too_deep(on_demand):
    depth = 12
    text = "\n".join(["<robot name='r'>"] + ["<a>"] * (depth - 1) + ["</a>"] * (depth - 1) + ["</robot>"])
    with limits.using(limits.checked_limits({"nesting_depth": depth - 1})):
        with pytest.raises(InputError) as err:
            parse_xml("deep.urdf", text, on_demand_lines=on_demand)
    assert err.value.line == depth and "nesting depth" in err.value.message
    with limits.using(limits.checked_limits({"nesting_depth": depth})):
        assert line_of(parse_xml("deep.urdf", text, on_demand_lines=on_demand)) == 1


@MODES
def test_syntax_error_names_the_line_and_the_collector_is_left_running(on_demand):
    assert gc.isenabled()
    with pytest.raises(InputError) as err:
        parse_xml("bad.urdf", "<robot name='r'>\n  <link name='a'>\n</robot>\n", on_demand_lines=on_demand)
    assert err.value.line == 3 and "mismatched tag" in err.value.message
    assert gc.isenabled()


def test_on_demand_lines_are_not_mapped_until_asked_and_leave_with_the_tree():
    root = parse_xml("tricky.urdf", TRICKY, on_demand_lines=True)
    doc = xmltree._DOCUMENTS[id(root)]
    assert doc._lines is None  # reading the tree maps nothing
    link_b = root.findall("link")[1]
    assert line_of(link_b) == 6 and doc._lines is not None
    del root, link_b
    gc.collect()
    assert doc not in xmltree._DOCUMENTS.values()  # the registry does not keep dead trees


def test_a_source_finds_its_line_after_the_tree_is_dropped_and_pickles_with_it():
    root = parse_xml("tricky.urdf", TRICKY, on_demand_lines=True)
    source = Source("tricky.urdf", line_refs(root)("joint", 0), "joint j")
    del root
    gc.collect()
    assert source.line == 9 and str(source) == "joint j (tricky.urdf:9)"
    copy = pickle.loads(pickle.dumps(source))
    assert copy == source == Source("tricky.urdf", 9, "joint j") and hash(copy) == hash(source)
    with pytest.raises(AttributeError):
        source.line = 3


def test_an_error_in_an_on_demand_urdf_names_the_line_of_its_element():
    text = TRICKY.replace('<box size="1 1 1"/>', '<box size="1 1 x"/>')
    from mbcompose.parsers.urdf.reader import read_urdf
    with pytest.raises(InputError) as err:
        read_urdf("tricky.urdf", text=text)
    assert (err.value.file, err.value.line) == ("tricky.urdf", 4) and "box@size" in err.value.message


def test_the_element_found_too_deep_is_the_first_one_in_document_order_at_that_depth():
    """xmltree._first_deeper_than (walks only the root's children with large subtrees) against
    a walk of every element, on random trees and limits."""
    import random
    import xml.etree.ElementTree as ET

    def first_at(root, depth):
        stack = [(root, 1)]
        while stack:  # depth-first in document order
            el, d = stack.pop()
            if d == depth:
                return el
            stack.extend((c, d + 1) for c in reversed(el))
        return None

    rng = random.Random(7)
    for _ in range(2000):
        root, nodes = ET.Element("r"), []
        nodes.append(root)
        for _ in range(rng.randint(0, 50)):
            parent = rng.choice(nodes) if rng.random() < 0.5 else nodes[-1]
            nodes.append(ET.SubElement(parent, "a"))
        limit = rng.randint(1, 10)
        expected = first_at(root, limit + 1)
        found = xmltree._first_deeper_than(root, limit)
        assert (found is None) if expected is None else (found == (expected, limit + 1))


@MODES
def test_line_refs_name_an_element_by_its_tag_position_and_child(on_demand):
    root = parse_xml("tricky.urdf", TRICKY, on_demand_lines=on_demand)
    refs = line_refs(root)
    found = [refs(), refs("link", 0), refs("link", 1), refs("link", 0, "visual"), refs("joint", 0, "child")]
    del root
    gc.collect()
    lines = [Source("tricky.urdf", ref).line for ref in found]
    assert lines == [2, 4, 6, 4, 9]  # TRICKY_LINES: robot, link a, link b, a's visual, j's child


def test_text_is_built_only_where_an_element_whose_text_is_read_can_occur():
    doc = "<robot name='r'><transmission><mechanicalReduction> 50 </mechanicalReduction></transmission></robot>"
    kept = parse_xml("t.urdf", doc, on_demand_lines=True, text_of=("mechanicalReduction",))
    assert kept.find("transmission/mechanicalReduction").text == " 50 "
    dropped = parse_xml("t.urdf", doc, on_demand_lines=True, text_of=("gear",))
    assert dropped.find("transmission/mechanicalReduction").text is None
    # an entity may make the element: a document with a DOCTYPE keeps its text
    entity = ('<!DOCTYPE robot [<!ENTITY r "&#60;mechanicalReduction>7&#60;/mechanicalReduction>">]>'
              "<robot name='r'><transmission>&r;</transmission></robot>")
    tree = parse_xml("e.urdf", entity, on_demand_lines=True, text_of=("mechanicalReduction",))
    assert tree.find("transmission/mechanicalReduction").text == "7"
