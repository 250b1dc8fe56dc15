"""The hostile-input corpus: bad inputs for every reader and every command.

``python tests/hostile/corpus.py DIR`` writes the corpus into DIR: one folder
per case under ``DIR/cases`` and ``DIR/cases.json`` listing, for each case,
the command line (run inside its folder) and what its one-line error must
name.  Large inputs (50,000-deep nesting, alias bombs, a sparse 300 MB file,
FIFOs, links to ``/dev/zero``) are generated here, never stored in git.

Every case must end with exit status 2 and one line ``error: ...`` naming the
file (and the line where there is one), write nothing and modify nothing;
``tests/hostile/test_corpus.py`` checks that.  ``DIR/outside`` holds a file
with secret content that some cases reach through ``../`` paths: its content
must never be printed.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from models import SECRET, mjcf_model, pipeline, sdf_model, tetra_stl, urdf_model, yaml_model

@dataclass
class Case:
    """One bad input: files to create, the command, and what the error must say.

    files : relative path -> text, or {"fifo": True}, {"symlink": target},
        {"sparse": size} or {"hex": bytes as hex}.
    argv : the mbcompose arguments, run in the case folder.
    names : the file the message must name (None: a CLI value, no file).
    line : whether the message must carry a line number after the file.
    expect : substrings the message must contain.
    forbid : substrings it must not contain (the secret of ``outside``).
    """

    name: str
    files: dict
    argv: list
    names: str | None
    line: bool = False
    expect: list = field(default_factory=list)
    forbid: list = field(default_factory=lambda: [SECRET])


#: commands a bad model is given to, in turn, so that every command meets every reader
COMMANDS = [
    lambda f: ["inspect", f],
    lambda f: ["graph", f, "-o", "picture.svg"],
    lambda f: ["simulate", f, "-o", "trajectory.csv", "--duration", "0.01", "--samples", "3"],
    lambda f: ["eval", f, "mass-matrix"],
    lambda f: ["convert", f, "-o", "converted.yaml"],
    lambda f: ["inspect", "--format", "json", f],
]


def _model_cases() -> list[tuple[str, str, dict, bool, list]]:
    """(name, model file, files, line expected, expected substrings) of bad models for every reader."""
    out = []

    def add(name, model, text, line=True, expect=(), extra=None):
        out.append((name, model, {model: text, **(extra or {})}, line, list(expect)))

    # native YAML: values
    for i, v in enumerate([".nan", ".inf", "-1", "1e308", "1e400", "abc", "null", "[1]", "{a: 1}",
                           "10000000000000000000000000000", "1.0e13", "true", "0x", "''"]):
        add(f"yaml_mass_{i}", "arm.yaml", yaml_model(mass=v))
    for i, v in enumerate(["1e308", "-0.5", "5.0", ".nan"]):
        add(f"yaml_inertia_{i}", "arm.yaml", yaml_model(ixx=v))
    for i, v in enumerate(["1e300", ".nan", "1.0e13", "-1e308"]):
        add(f"yaml_length_{i}", "arm.yaml", yaml_model(z=v))
    for i, v in enumerate(["[0, 1e308, 1e308]", "[0, 0, 0]", "[0, 1]", "[a, b, c]", "[0, .inf, 0]", "7"]):
        add(f"yaml_axis_{i}", "arm.yaml", yaml_model(axis=v))
    for v, hint in (("revolut", "revolute"), ("prismatc", "prismatic"), ("null", ""), ("[1]", "")):
        add(f"yaml_type_{v.strip('[]') or 'x'}", "arm.yaml", yaml_model(type=v), expect=[hint] if hint else [])
    add("yaml_unknown_body", "arm.yaml", yaml_model(ref="lnk1"), expect=["did you mean 'link1'"])
    add("yaml_self_joint", "arm.yaml", yaml_model(ref="link2"))
    base = yaml_model()
    for wrong, right in (("bodies:", "bodys:"), ("    axis:", "    axsi:"), ("secondary: link1", "secondry: link1"),
                         ("    inertial:\n      mass: 1.0", "    inertal:\n      mass: 1.0"),
                         ("      mass: 1.0", "      mas: 1.0"), ("units:", "unit:")):
        key = wrong.split(":")[0].strip()
        add(f"yaml_key_typo_{key}", "arm.yaml", base.replace(wrong, right, 1), expect=["did you mean"])
    add("yaml_alias_bomb", "arm.yaml", _alias_bomb() + base, expect=["yaml_nodes"])
    add("yaml_recursive_alias", "arm.yaml", base + "extra: &a [1, *a]\n")
    add("yaml_nul_byte", "arm.yaml", base.replace("name: link2", "name: li\0nk2"))
    add("yaml_deep_flow", "arm.yaml", "bodies: " + "[" * 50_000 + "]" * 50_000 + "\n", expect=["nesting_depth"])
    add("yaml_deep_block", "arm.yaml", "".join(" " * i + "- \n" for i in range(0, 3000, 1)), expect=["nesting"])
    add("yaml_empty", "arm.yaml", "", expect=["empty"])
    add("yaml_comment_only", "arm.yaml", "# nothing\n", expect=["empty"])
    add("yaml_top_list", "arm.yaml", "- 1\n- 2\n")
    add("yaml_top_scalar", "arm.yaml", "just a string\n")
    add("yaml_tab", "arm.yaml", base.replace("  - name: link2", "\t- name: link2"))
    add("yaml_duplicate_key", "arm.yaml", base.replace("name: arm", "name: arm\nname: arm2"), expect=["duplicate"])
    add("yaml_unclosed", "arm.yaml", base.replace("[0, 0, -9.81]", "[0, 0, -9.81"))
    add("yaml_python_tag", "arm.yaml", base.replace("name: arm", "name: !!python/object/apply:os.system [ls]"))
    add("yaml_disconnected", "arm.yaml", base.replace("joints:", "  - name: link3\n    inertial: {mass: 1, com: "
                                                       "[0, 0, 0], inertia: [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}\n"
                                                       "joints:"), expect=["not connected"])
    add("yaml_latin1", "arm.yaml", None, extra={"arm.yaml": {"hex": (base.replace("arm", "arm\u00e9", 1))
                                                               .encode("latin-1").hex()}})
    add("yaml_is_a_secret", "arm.yaml", {"symlink": "../../outside/secret.txt"}, expect=["got a string"])
    add("yaml_secret_mapping", "arm.yaml", f"password: {SECRET}\n{SECRET}: 1\n", expect=["none of the keys"])
    add("yaml_dev_urandom", "arm.yaml", {"symlink": "/dev/urandom"}, line=False, expect=["regular file"])
    add("yaml_dev_zero", "arm.yaml", {"symlink": "/dev/zero"}, line=False, expect=["regular file"])
    add("yaml_fifo", "arm.yaml", {"fifo": True}, line=False, expect=["FIFO"])
    add("yaml_directory", "arm.yaml", {"dir": True}, line=None, expect=["is a directory"])
    add("yaml_sparse_300MB", "arm.yaml", {"sparse": 300 * 1024 * 1024}, line=False, expect=["input_bytes"])
    add("yaml_missing_mesh", "arm.yaml", base.replace("      com: [0, 0, -0.25]\n      inertia: {ixx: 0.021, "
                                                      "iyy: 0.021, izz: 0.0003, ixy: 0, ixz: 0, iyz: 0}\n", "")
        .replace("    inertial:\n      mass: 1.0\n", "    density: 1000\n    geometry:\n"
                 "      - mesh: nothere.stl\n"), line=None)
    for i, target in enumerate(["/dev/zero", "fifo", "garbage", "outside"]):
        files = {"fifo": {"part.stl": {"fifo": True}}, "/dev/zero": {"part.stl": {"symlink": "/dev/zero"}},
                 "garbage": {"part.stl": "solid x\nfacet normal " + SECRET + "\n"},
                 "outside": {}}[target]
        mesh = "../../outside/secret.stl" if target == "outside" else "part.stl"
        text = base.replace("    inertial:\n      mass: 1.0\n      com: [0, 0, -0.25]\n      inertia: {ixx: 0.021, "
                            "iyy: 0.021, izz: 0.0003, ixy: 0, ixz: 0, iyz: 0}\n",
                            f"    density: 1000\n    geometry:\n      - mesh: {mesh}\n")
        add(f"yaml_mesh_{i}", "arm.yaml", text, line=None, extra=files)

    # URDF
    for i, v in enumerate(["nan", "inf", "abc", "-1", "", "1e308", "1 2"]):
        add(f"urdf_mass_{i}", "arm.urdf", urdf_model(mass=v))
    for i, v in enumerate(["1e308", "nan", "1e13"]):  # (-1 and 0.1 are kept with a warning, as ROS does)
        add(f"urdf_inertia_{i}", "arm.urdf", urdf_model(ixx=v))
    for i, v in enumerate(["0 1e308 1e308", "0 0 0", "1 0", "x y z", "0 nan 0"]):
        add(f"urdf_axis_{i}", "arm.urdf", urdf_model(axis=v))
    for i, v in enumerate(["1e300 0 0", "1 2", "0 0 inf", "1e13 0 0"]):
        add(f"urdf_origin_{i}", "arm.urdf", urdf_model(xyz=v))
    add("urdf_type_typo", "arm.urdf", urdf_model(type="revolut"), expect=["did you mean 'revolute'"])
    add("urdf_parent_typo", "arm.urdf", urdf_model(parent="bsae"), expect=["did you mean 'base'"])
    add("urdf_limit_typo", "arm.urdf", urdf_model(lower="low"))
    add("urdf_unknown_encoding", "arm.urdf", urdf_model().replace('<?xml version="1.0"?>',
                                                                '<?xml version="1.0" encoding="klingon-8"?>'))
    add("urdf_deep_nesting", "arm.urdf", "<robot name='x'>" + "<a>" * 50_000 + "</a>" * 50_000 + "</robot>",
        expect=["nesting_depth"])
    add("urdf_entity_bomb", "arm.urdf", '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
        + "".join(f'<!ENTITY {c} "{("&" + p + ";") * 10}">' for p, c in zip("abcdefgh", "bcdefghi"))
        + ']>\n<robot name="&i;"/>\n')
    add("urdf_external_entity", "arm.urdf", '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY x SYSTEM '
        '"../../outside/secret.txt">]>\n<robot name="&x;"><link name="a"/></robot>\n', line=None)
    add("urdf_truncated", "arm.urdf", urdf_model()[:300])
    add("urdf_not_xml", "arm.urdf", "this is not xml\n" + SECRET)
    add("urdf_wrong_root", "arm.urdf", "<mujoco/>")
    add("urdf_dev_zero", "arm.urdf", {"symlink": "/dev/zero"}, line=False, expect=["regular file"])
    add("urdf_fifo", "arm.urdf", {"fifo": True}, line=False, expect=["FIFO"])
    add("urdf_outside_mesh", "arm.urdf", urdf_model(
        mass="1.5", geometry='<collision><geometry><mesh filename="package://pkg/../../../outside/secret.stl"/>'
        '</geometry></collision>'), line=None)
    add("urdf_mesh_dev_zero", "arm.urdf", urdf_model(
        geometry='<collision><geometry><mesh filename="zero.stl"/></geometry></collision>'), line=None,
        extra={"zero.stl": {"symlink": "/dev/zero"}})
    add("urdf_xml_suffix_fifo", "arm.xml", {"fifo": True}, line=False, expect=["FIFO"])
    add("urdf_mesh_etc_passwd", "arm.urdf", urdf_model(
        mass="1.5", geometry='<visual><geometry><mesh filename="/etc/passwd"/></geometry></visual>'),
        expect=["not a mesh file"])
    add("urdf_mesh_outside_text", "arm.urdf", urdf_model(
        mass="1.5", geometry='<visual><geometry><mesh filename="../../outside/secret.txt"/></geometry></visual>'),
        expect=["not a mesh file"])

    # MJCF
    for attr, v, hint in (("group", "abc", ""), ("group", "1.5", "integer"), ("mass", "nan", ""),
                          ("mass", "lots", ""), ("size", "1e-308", ""), ("size", "-1", ""),
                          ("axis", "0 0 0", ""), ("pos", "1e300 0 0", ""), ("type", "hinj", "did you mean"),
                          ("diag", "1 1 5", "triangle"), ("diag", "-1 1 1", ""), ("diag", "1 1", ""),
                          ("compiler", 'boundmass="x"', ""), ("compiler", 'settotalmass="lots"', ""),
                          ("compiler", 'angle="rad"', ""), ("compiler", 'inertiagrouprange="a b"', "")):
        add(f"mjcf_{attr}_{v.split('=')[0]}_{len(out)}", "arm.xml", mjcf_model(**{attr: v}),
            expect=[hint] if hint else [])
    add("mjcf_deep_bodies", "arm.xml", "<mujoco><worldbody>" + '<body pos="0 0 0">' * 50_000
        + "</body>" * 50_000 + "</worldbody></mujoco>", expect=["nesting_depth"])
    add("mjcf_include_missing", "arm.xml", mjcf_model(head='<include file="nothere.xml"/>'))
    add("mjcf_include_cycle", "arm.xml", mjcf_model(head='<include file="a.xml"/>'),
        extra={"a.xml": '<mujoco><include file="a.xml"/></mujoco>'}, line=None)
    add("mjcf_include_outside", "arm.xml", mjcf_model(head='<include file="../../outside/secret.txt"/>'),
        line=None)
    for name in ("secret_mjcf.xml", "secret_root.xml"):
        add(f"mjcf_include_outside_{name[7:-4]}", "arm.xml", mjcf_model(head=f'<include file="../../outside/{name}"/>'),
            line=None, expect=[f"outside/{name}:", "not quoted"])
    add("mjcf_include_dev_zero", "arm.xml", mjcf_model(head='<include file="zero.xml"/>'), line=None,
        extra={"zero.xml": {"symlink": "/dev/zero"}})
    add("mjcf_mjcf_suffix_zero", "arm.mjcf", {"symlink": "/dev/zero"}, line=False)

    # SDFormat
    for attr, v in (("version", "abc"), ("version", "1"), ("mass", "nan"), ("mass", "-1"), ("mass", "1e308"),
                    ("axis", "0 0 0"), ("axis", "0 1e308 1e308"), ("type", "revolut"), ("parent", "wrld"),
                    ("pose", "1 2 3"), ("pose", "1e300 0 0 0 0 0"),
                    ("extra", '<include><uri>model://x</uri></include>')):
        add(f"sdf_{attr}_{len(out)}", "arm.sdf", sdf_model(**{attr: v}))
    add("sdf_dev_urandom", "arm.sdf", {"symlink": "/dev/urandom"}, line=False, expect=["regular file"])
    add("sdf_deep", "arm.sdf", "<sdf version='1.7'>" + "<model>" * 50_000 + "</model>" * 50_000 + "</sdf>",
        expect=["nesting_depth"])
    add("unknown_suffix", "arm.txt", "hello", line=False, expect=["no reader"])
    return out


def _alias_bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def model_cases() -> list[Case]:
    cases = []
    for i, (name, model, files, line, expect) in enumerate(_model_cases()):
        files = {k: v for k, v in files.items() if v is not None}
        cases.append(Case(name, files, COMMANDS[i % len(COMMANDS)](model), names=model if line is not None
                          else None, line=bool(line), expect=expect))
    return cases


def cli_cases() -> list[Case]:
    """Bad command-line values (no file to name, or the output named)."""
    model = {"arm.yaml": yaml_model(), "afile": "not a folder\n"}
    sim = ["simulate", "arm.yaml", "-o", "t.csv"]
    ev = ["eval", "arm.yaml"]
    rows = [
        (sim + ["--duration", "nan"], "--duration"), (sim + ["--duration", "inf"], "--duration"),
        (sim + ["--duration", "-1"], "--duration"), (sim + ["--duration", "0"], "--duration"),
        (sim + ["--duration", "1e7"], "duration"), (sim + ["--duration", "abc"], "--duration"),
        (sim + ["--samples", "100000000"], "samples"), (sim + ["--samples", "1"], "--samples"),
        (sim + ["--samples", "abc"], "--samples"),
        (sim + ["--q0", 'shoulder={"a":1}'], "--q0"), (sim + ["--q0", "shoulder=null"], "--q0"),
        (sim + ["--q0", "shoulder=NaN"], "--q0"), (sim + ["--q0", "shouldr=0.1"], "did you mean 'shoulder'"),
        (sim + ["--q0", "shoulder=1e308"], "magnitude"), (sim + ["--q0", "[1,2]"], "--q0"),
        (sim + ["--q0", "shoulder=[1,2]"], "--q0"), (sim + ["--q0", "shoulder"], "--q0"),
        (sim + ["--q0", '{"shoulder": "x"}'], "--q0"), (sim + ["--q0", "[1]"], "--q0"),
        (sim + ["--v0", "elbow=Infinity"], "--v0"), (sim + ["--torque", "elbw=1"], "did you mean 'elbow'"),
        (sim + ["--atol", "-1"], "--atol"), (sim + ["--rtol", "-1"], "--rtol"), (sim + ["--rtol", "nan"], "--rtol"),
        (sim + ["--atol", "0"], "--atol"), (sim + ["--integrator", "DOP85"], "did you mean 'DOP853'"),
        (["simulate", "arm.yaml", "-o", "t.txt"], "--output"),
        (["simulate", "arm.yaml", "-o", "missing/t.csv"], "missing"),
        (["simulate", "arm.yaml", "-o", "afile/t.csv"], "afile"),
        (ev + ["jacobian", "--point", "nan,0,0"], "--point"), (ev + ["jacobian", "--point", "1,2"], "--point"),
        (ev + ["jacobian", "--point", "a,b,c"], "--point"), (ev + ["jacobian", "--point", "1e300,0,0"], "--point"),
        (ev + ["bias", "--v", "shoulder=Infinity"], "--v"), (ev + ["bias", "--q", "shoulder=1e308"], "--q"),
        (ev + ["jacobian", "--body", "lnk2"], "did you mean 'link2'"), (ev + ["mass-matrx"], "did you mean"),
        (ev + ["jacobian", "--frame", "wrld"], "did you mean 'world'"),
        (ev + ["mass-matrix", "--format", "jsn"], "did you mean 'json'"),
        (ev + ["inverse-dynamics", "--a", "elbow=nan"], "--a"),
        (ev + ["forward-dynamics", "--tau", "elbow=[1,2]"], "--tau"),
        (["convert", "arm.yaml", "-o", "/nonexistent-mbcompose-dir/sub/x.urdf"], "nonexistent"),
        (["convert", "arm.yaml", "-o", "missing/x.urdf"], "missing"),
        (["convert", "arm.yaml", "-o", "afile/x.urdf"], "afile"),
        (["convert", "arm.yaml", "-o", "arm.yaml"], "refusing to overwrite"),
        (["convert", "arm.yaml", "-o", "x.stl"], "--output"),
        (["graph", "arm.yaml", "-o", "x.gif"], "--output"), (["graph", "arm.yaml", "-o", "missing/x.svg"], "missing"),
        (["graph", "arm.yaml", "-o", "x.svg", "--stage", "reducd"], "did you mean 'reduced'"),
        (["inspect", "--format", "jsn", "arm.yaml"], "did you mean 'json'"),
        (["inspct", "arm.yaml"], "did you mean 'inspect'"),
        (["--limit", "mesh_face=1", "inspect", "arm.yaml"], "did you mean 'mesh_faces'"),
        (["--limit", "samples=-1", "inspect", "arm.yaml"], "--limit"),
        (["--limit", "duration=abc", "inspect", "arm.yaml"], "--limit"),
        (["--limit", "input_bytes=100", "inspect", "arm.yaml"], "input_bytes="),
        (["--limit", "magnitude=0.1", "inspect", "arm.yaml"], "magnitude="),
        (["--limit", "nesting_depth=2", "inspect", "arm.yaml"], "nesting_depth="),
        (["--limit", "yaml_nodes=10", "inspect", "arm.yaml"], "yaml_nodes="),
        (["inspect", "nothere.yaml"], "not found"), (["inspect", "nothere.yml"], "not found"),
    ]
    out = []
    for i, (argv, hint) in enumerate(rows):
        names = "arm.yaml" if argv[0] == "--limit" and "=" in hint or hint == "refusing to overwrite" else None
        if hint == "not found":
            names = argv[-1]
        out.append(Case(f"cli_{i:02d}_{argv[0]}", dict(model), argv, names=names, line=False, expect=[hint]))
    files = {"arm.yaml": yaml_model(), "part.stl": {"hex": tetra_stl().hex()}}
    files["arm.yaml"] = files["arm.yaml"].replace(
        "    inertial:\n      mass: 1.0\n      com: [0, 0, -0.25]\n      inertia: {ixx: 0.021, iyy: 0.021, "
        "izz: 0.0003, ixy: 0, ixz: 0, iyz: 0}\n", "    density: 1000\n    geometry:\n      - mesh: part.stl\n")
    out.append(Case("cli_mesh_faces_limit", files, ["--limit", "mesh_faces=2", "inspect", "arm.yaml"],
                    names="arm.yaml", line=True, expect=["mesh_faces"]))
    return out


def pipeline_cases() -> list[Case]:
    """Bad pipelines for ``mbcompose run``: every error names the pipeline (or model) file and line."""
    model = yaml_model()
    rows = [
        ("key_ouputs", pipeline().replace("outputs:", "ouputs:"), ["did you mean 'outputs'"]),
        ("key_lumpng", pipeline(options="options: {lumpng: true}"), ["did you mean 'lumping'"]),
        ("key_inptu", pipeline().replace("input:", "inptu:"), ["did you mean 'input'"]),
        ("key_limits", pipeline(options="limits: {mesh_face: 10}"), ["did you mean 'mesh_faces'"]),
        ("limit_negative", pipeline(options="limits: {samples: -1}"), []),

        ("loops_typo", pipeline(options="options: {loops: embedd}"), ["did you mean 'embed'"]),
        ("base_typo", pipeline(options="options: {base: floting}"), ["did you mean 'floating'"]),
        ("rank_negative", pipeline(options="options: {tolerances: {rank: -1}}"), []),
        ("duration_nan", pipeline(duration=".nan"), []), ("duration_inf", pipeline(duration=".inf"), []),
        ("duration_1e7", pipeline(duration="1.0e7"), ["duration"]),
        ("duration_1e+7", pipeline(duration="1.0e+7"), ["duration"]),
        ("duration_negative", pipeline(duration="-1"), []), ("duration_text", pipeline(duration="long"), []),
        ("samples_1e8", pipeline(samples="1.0e8"), ["samples"]), ("samples_fraction", pipeline(samples="1.5"), []),
        ("samples_one", pipeline(samples="1"), []), ("rtol_negative", pipeline(rtol="-1"), []),
        ("integrator_typo", pipeline(integrator="DOP85"), ["did you mean 'DOP853'"]),
        ("format_typo", pipeline(format="cvs"), ["did you mean 'csv'"]),
        ("exports_typo", pipeline(exports="[urfd]"), ["did you mean 'urdf'"]),
        ("initial_typo", pipeline(q="{shouldr: 0.1}"), ["did you mean 'shoulder'"]),
        ("initial_null", pipeline(q="{shoulder: null}"), []),
        ("initial_text", pipeline(q="{shoulder: abc}"), []),
        ("initial_count", pipeline(q="{shoulder: [1, 2]}"), ["takes 1"]),
        ("initial_huge", pipeline(q="{shoulder: 1.0e300}"), ["magnitude"]),
        ("input_missing", pipeline(input="nothere.yaml"), ["not found"]),
        ("inputs_empty", pipeline().replace("input: arm.yaml", "inputs: []"), ["empty"]),
        ("alias_bomb", _alias_bomb() + pipeline(), ["yaml_nodes"]),
        ("nul_byte", pipeline().replace("model: true", "model: tr\0ue"), []),
        ("deep", pipeline(options="options: " + "[" * 50_000 + "]" * 50_000), ["nesting_depth"]),
    ]
    out = [Case(f"run_{name}", {"arm.yaml": model, "pipeline.yaml": text}, ["run", "pipeline.yaml"],
                names="pipeline.yaml", line=True, expect=expect) for name, text, expect in rows]
    out.append(Case("run_composite_typo", {"arm.yaml": model, "pipeline.yaml": pipeline(
        options="options: {composite_names: {lnk1: arm}}")}, ["run", "pipeline.yaml"], names="pipeline.yaml",
        expect=["did you mean 'link1'"]))
    out.append(Case("run_directory_is_a_file", {"arm.yaml": model, "pipeline.yaml": pipeline(directory="afile/out"),
                                               "afile": "x\n"}, ["run", "pipeline.yaml"], names="afile"))
    out.append(Case("run_input_fifo", {"arm.yaml": {"fifo": True}, "pipeline.yaml": pipeline()},
                    ["run", "pipeline.yaml"], names="arm.yaml", expect=["FIFO"]))
    out.append(Case("run_input_dev_zero", {"arm.yaml": {"symlink": "/dev/zero"}, "pipeline.yaml": pipeline()},
                    ["run", "pipeline.yaml"], names="arm.yaml", expect=["regular file"]))
    out.append(Case("run_export_over_input", {"arm.urdf": urdf_model(),
                                              "pipeline.yaml": pipeline(input="arm.urdf", directory=".",
                                                                        exports="[urdf]")},
                    ["run", "pipeline.yaml"], names="arm.urdf", expect=["refusing to overwrite"]))
    out.append(Case("run_export_over_include", {
        "arm.xml": mjcf_model(head='<include file="arm.sdf"/>'), "arm.sdf": "<mujoco><option timestep='0.01'/>"
        "</mujoco>\n", "pipeline.yaml": pipeline(input="arm.xml", directory=".", exports="[sdf]")},
        ["run", "pipeline.yaml"], names="arm.sdf", expect=["refusing to overwrite"]))
    out.append(Case("run_model_loop_not_closed", {"arm.yaml": _open_fourbar(), "pipeline.yaml": pipeline(
        q="{}")}, ["run", "pipeline.yaml"], names="arm.yaml", line=True, expect=["cannot close"]))
    return out


def _open_fourbar() -> str:
    """The fourbar sample with its rocker pivot 0.6 m away on the rocker: the loop cannot close."""
    text = (Path(__file__).resolve().parents[2] / "samples/fourbar/fourbar.yaml").read_text(encoding="utf-8")
    return text.replace("    origin: [0.3, 0, 0]\n", "    origin: [0.3, 0, 0]\n    secondary_origin: [0.9, 0, 0]\n"
                        ).replace("name: fourbar", "name: arm")


def all_cases() -> list[Case]:
    return model_cases() + cli_cases() + pipeline_cases()


def _write_file(path: Path, spec) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(spec, str):
        path.write_text(spec, encoding="utf-8")
    elif "fifo" in spec:
        os.mkfifo(path)
    elif "symlink" in spec:
        path.symlink_to(spec["symlink"])
    elif "sparse" in spec:
        with open(path, "wb") as fh:
            fh.truncate(spec["sparse"])
    elif "dir" in spec:
        path.mkdir()
    else:
        path.write_bytes(bytes.fromhex(spec["hex"]))


#: the files of ``DIR/outside`` (no line of them may be printed): text, and MJCF whose every line
#: holds the secret in a value, a name, a tag
OUTSIDE = {"secret.txt": f"{SECRET}\n{SECRET}\n", "secret.stl": f"{SECRET}\n{SECRET}\n",
           "secret.xml": f"{SECRET}\n{SECRET}\n",
           "secret_mjcf.xml": f'<mujoco model="{SECRET}">\n<worldbody><body name="{SECRET}-body">\n'
                              f'<joint name="j" type="{SECRET}"/><geom size="0.1"/></body><!-- {SECRET} -->\n'
                              f'</worldbody></mujoco><!-- {SECRET} -->\n',
           "secret_root.xml": f"<{SECRET}>\n<x/><!-- {SECRET} -->\n</{SECRET}>\n"}


def write_corpus(root: Path) -> list[Case]:
    """Write every case under ``root/cases`` (and the secret under ``root/outside``); the cases."""
    root = Path(root)
    (root / "outside").mkdir(parents=True, exist_ok=True)
    for name, text in OUTSIDE.items():
        (root / "outside" / name).write_text(text, encoding="utf-8")
    cases = all_cases()
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), "case names must be unique"
    for case in cases:
        for rel, spec in case.files.items():
            _write_file(root / "cases" / case.name / rel, spec)
    (root / "cases.json").write_text(json.dumps([asdict(c) for c in cases], indent=1), encoding="utf-8")
    return cases


if __name__ == "__main__":
    written = write_corpus(Path(sys.argv[1]))
    print(f"{len(written)} cases in {sys.argv[1]}")
