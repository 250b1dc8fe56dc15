"""Messages about a file outside the model's folder say where, never what (issue 25).

An MJCF ``<include>`` (or an attached model) may climb out of the model's folder; MuJoCo reads
it, and so do we, but an error or a warning located in such a file quotes none of its text
(values, names, tags, a syntax error's words): :func:`parsers.errors.quoting_only_inside`.
Inside the folder, messages quote as usual.
"""

import logging

import pytest

from mbcompose import compose
from mbcompose.parsers import InputError
from mbcompose.parsers.errors import redacted

SECRET = "TOP-SECRET-CONTENT-42"
MODEL = '<mujoco>\n  <include file="{}"/>\n  <worldbody><body><joint/><geom size="0.1"/></body></worldbody>\n</mujoco>\n'


def _lines(text):
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.fixture()
def folders(tmp_path):
    (tmp_path / "model").mkdir()
    return tmp_path / "model", tmp_path


@pytest.mark.parametrize("included", [
    f'<mujoco>\n<worldbody><body name="b"><joint name="{SECRET}" type="{SECRET}"/></body></worldbody>\n</mujoco>\n',
    f'<mujoco>\n<worldbody><body name="b" pos="{SECRET} 0 0"/></worldbody>\n</mujoco>\n',
    f"<{SECRET}>\n</{SECRET}>\n",
    f"root:x:0:0:{SECRET}:/root:/bin/bash\n{SECRET}\n",
    f'<mujoco>\n<worldbody><body name="b"><joint name="j" type="hinj"/><geom size="0.1"/></body></worldbody>'
    f"\n</mujoco>\n<!-- {SECRET} -->\n",
], ids=["joint_type", "number", "root_tag", "not_xml", "suggestion"])
def test_an_error_in_an_included_file_outside_the_folder_says_where_not_what(folders, included):
    model, outside = folders
    (outside / "secret.xml").write_text(included)
    (model / "m.xml").write_text(MODEL.format("../secret.xml"))
    with pytest.raises(InputError) as exc:
        compose(model / "m.xml")
    msg = str(exc.value)
    assert exc.value.file.endswith("secret.xml") and exc.value.line is not None
    assert SECRET not in msg and "not quoted" in msg
    assert not [line for line in _lines(included) if line in msg]


def test_the_same_error_inside_the_folder_is_quoted(folders):
    model, _ = folders
    (model / "part.xml").write_text('<mujoco>\n<worldbody><body name="b"><joint type="hinj"/><geom size="0.1"/>'
                                    "</body></worldbody>\n</mujoco>\n")
    (model / "m.xml").write_text(MODEL.format("part.xml"))
    with pytest.raises(InputError, match="unknown joint type 'hinj' \\(did you mean 'hinge'\\?\\)"):
        compose(model / "m.xml")


def test_a_warning_about_an_included_file_outside_the_folder_says_where_not_what(folders, caplog):
    model, outside = folders
    included = (f'<mujoco>\n<worldbody><body name="b" pos="0 0 1"><joint name="{SECRET}" type="ball" frictionloss="1"/>'
                '<geom size="0.1"/></body></worldbody>\n</mujoco>\n')
    (outside / "secret.xml").write_text(included)
    (model / "m.xml").write_text(MODEL.format("../secret.xml"))
    with caplog.at_level(logging.WARNING, logger="mbcompose"):
        compose(model / "m.xml")
    assert "secret.xml:2: joint ...: frictionloss" in caplog.text
    assert SECRET not in caplog.text


def test_redacted_keeps_the_kind_of_problem():
    assert redacted("unknown joint type 'x' (did you mean 'hinge'?)") == (
        "unknown joint type ... (did you mean ...?) (not quoted: the file is outside the model's folder)")
    assert redacted("XML syntax error: mismatched tag secret (column 3)").startswith("XML syntax error: ... (not")


def test_a_mesh_that_is_no_mesh_file_is_refused_at_its_line(tmp_path):
    """``/etc/passwd`` (no mesh suffix) at the ``<mesh>`` line when read; a text file renamed ``.stl``
    when the mesh is loaded (here for inertia from geometry), naming the link's line."""
    link = ('<robot name="r"><link name="a"/>\n<link name="b">\n<collision><geometry>'
            '<mesh filename="{}"/></geometry></collision></link>\n<joint name="j" type="continuous">'
            '<parent link="a"/><child link="b"/></joint></robot>\n')
    (tmp_path / "notes.stl").write_text(f"some notes, renamed\n{SECRET}\n")
    for target, line, words in (("/etc/passwd", 3, "it has no suffix"), ("notes.stl", 2, "neither a binary STL")):
        (tmp_path / "r.urdf").write_text(link.format(target))
        with pytest.raises(InputError) as exc:
            compose(tmp_path / "r.urdf", inertia_from_geometry_density=1000.0)
        assert exc.value.line == line and "not a mesh file" in str(exc.value) and words in str(exc.value)
        assert SECRET not in str(exc.value)
