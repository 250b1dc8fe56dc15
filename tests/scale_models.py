"""Large generated URDFs for the scale tests and ``benchmarks/scale.py``.

``chain_urdf(n)``: a serial chain of ``n`` links below a fixed base, each
joined to the previous one by a revolute joint about z, 0.1 m along x.
``star_urdf(n)``: ``n`` links each joined to the same base link by a
revolute joint (a star of depth one).  Every link has mass 1 kg and the
inertia of a 0.1 m x 0.02 m x 0.02 m box about its centre of mass.
"""

from __future__ import annotations

from pathlib import Path

_INERTIAL = ('<inertial><origin xyz="0.05 0 0"/><mass value="1"/>'
             '<inertia ixx="6.667e-5" iyy="8.667e-4" izz="8.667e-4" ixy="0" ixz="0" iyz="0"/></inertial>')


def _link(name: str) -> str:
    return f'<link name="{name}">{_INERTIAL}</link>'


def _revolute(name: str, parent: str, child: str, xyz: str) -> str:
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="0 0 1"/>'
            '<limit lower="-3" upper="3" effort="10" velocity="10"/></joint>')


def chain_urdf(n: int) -> str:
    """URDF text of a serial chain of ``n`` moving links (``n`` revolute joints)."""
    parts = ['<robot name="chain">', _link("base")]
    for k in range(n):
        parts.append(_link(f"l{k}"))
        parts.append(_revolute(f"j{k}", "base" if k == 0 else f"l{k - 1}", f"l{k}",
                               "0 0 0" if k == 0 else "0.1 0 0"))
    parts.append("</robot>")
    return "\n".join(parts)


def star_urdf(n: int) -> str:
    """URDF text of ``n`` links each hinged to one base link (``n`` revolute joints)."""
    parts = ['<robot name="star">', _link("base")]
    for k in range(n):
        parts.append(_link(f"l{k}"))
        parts.append(_revolute(f"j{k}", "base", f"l{k}", f"{0.001 * k:.3f} 0 0"))
    parts.append("</robot>")
    return "\n".join(parts)


def write(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` and return the path."""
    path = Path(path)
    path.write_text(text)
    return path
