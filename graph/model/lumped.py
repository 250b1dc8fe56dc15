"""The lumped assembly: composites as bodies, every original part kept as a frame.

Exporters (native YAML, URDF, MJCF, SDF) write this assembly, so a lumped
model keeps its merged mass properties (seed 004, Table 2) and still names
every part of the input.

Frames: a composite's body frame is its root member's frame (the member nearest
ground); its mass properties are the merged ones (:func:`graph.analyse`)
expressed in that frame; each member becomes a :class:`parsers.Frame` at its
original pose (except the member the composite is named after: its frame is
the body frame), and its geometry is carried over, re-expressed in the composite
frame.
"""

from __future__ import annotations

from dataclasses import replace

from mbcompose.parsers.assembly import Assembly, Body, Frame, Geometry, PointLoad, Source, Tendon
from mbcompose.parsers.massprops import transform_mass_properties


def _carry_geometry(member: Body, composite_pose) -> tuple[Geometry, ...]:
    to_composite = composite_pose.inverse().compose(member.pose)
    return tuple(replace(g, pose=to_composite.compose(g.pose)) for g in member.geometry)


def lumped_assembly(assembly: Assembly, bodies, joints) -> Assembly:
    """An Assembly of composite bodies.

    Parameters
    ----------
    assembly : the input assembly.
    bodies : graph.model.tree.RigidBody list (composites, mass in the assembly frame).
    joints : the joints kept between them (parsers.Joint, composite names).
    """
    out_bodies, frames = [], []
    for rb in bodies:
        members = [assembly.body(m) for m in rb.members] or [assembly.body(rb.name)]
        pose = members[0].pose
        mass = transform_mass_properties(rb.mass, pose.inverse())
        geometry = tuple(g for m in members for g in _carry_geometry(m, pose))
        note = f"composite of {', '.join(m.name for m in members)}" if len(members) > 1 else ""
        sources = dict(members[0].sources)
        if note:
            sources["mass"] = Source(note=f"merged: {note}")
        out_bodies.append(Body(rb.name, pose, mass, geometry, sources))
        frames.extend(Frame(m.name, rb.name, m.pose, Source(note=f"part of {rb.name}"))
                      for m in members if m.name != rb.name)
    owner = {m: rb.name for rb in reversed(bodies) for m in (rb.name, *rb.members)}  # first composite wins
    frames.extend(Frame(f.name, owner.get(f.body, f.body), f.pose, f.source) for f in assembly.frames)
    springs = tuple(replace(s, body_a=owner.get(s.body_a, s.body_a), body_b=owner.get(s.body_b, s.body_b))
                    for s in assembly.springs)
    forces = tuple(replace(f, body=owner.get(f.body, f.body)) if isinstance(f, PointLoad)
                   else replace(f, sites=tuple((owner.get(b, b), p) for b, p in f.sites)) if isinstance(f, Tendon)
                   else f for f in assembly.forces)
    return Assembly(name=assembly.name, bodies=tuple(out_bodies), joints=tuple(joints),
                    gravity=assembly.gravity, couplings=assembly.couplings, springs=springs,
                    frames=tuple(frames), source_file=assembly.source_file, actuators=assembly.actuators,
                    forces=forces)

