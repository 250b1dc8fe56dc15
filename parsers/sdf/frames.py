"""The frame graph of one SDFormat model, nested models included (SDFormat 1.7+ pose-frame semantics).

Every frame of the model tree is named by its *scoped* name: ``link`` in the
top model, ``inner::link`` in nested model ``inner``, ``inner::deeper::frame``
and so on (SDFormat 1.8 scoping).  A nested model's own frame is named after
the model (``inner``; ``inner::__model__`` is the same frame); the top model's
frame is ``__model__``.  Each frame stores the frame its pose is relative to
and the pose (http://sdformat.org/tutorials?tut=pose_frame_semantics):

* a link, a nested model and a ``<frame>`` are relative to their scope's model
  frame unless ``relative_to`` names another frame of the scope (a ``<frame>``
  defaults to the frame it is ``attached_to``);
* a joint is relative to its child frame;
* a model with ``placement_frame`` (SDFormat 1.8) is placed so that its pose is
  the pose of that frame, not of the model frame.

Names are resolved inside their scope only: ``relative_to="l"`` in model
``inner`` means ``inner::l``, and ``__model__`` there means ``inner``.  A frame
is *attached* to a link (the body it moves with): a link to itself, a joint to
its child, a model to its canonical link, a ``<frame>`` to its ``attached_to``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..assembly import Pose
from ..errors import did_you_mean
from ..xml import error

MODEL = "__model__"


@dataclass
class FrameEntry:
    """One frame: the element declaring it, where its pose is given, and what it is attached to.

    kind : 'link', 'joint', 'frame' or 'model'.
    relative_to : scoped name of the frame ``pose`` is given in.
    attached_to : scoped name (a joint: its child frame; a model: its canonical link; a frame: its
        ``attached_to``); None for a link.
    placement : scoped name of a model's ``placement_frame``, or None.
    scope : the scope prefix the entry's names were written in (for messages).
    """

    el: object
    kind: str
    relative_to: str
    pose: Pose
    pose_el: object
    attached_to: str | None = None
    placement: str | None = None
    scope: str = ""


def model_frame(scope: str) -> str:
    """The frame of the model whose scope prefix is ``scope`` (``''`` -> ``__model__``, ``'a::b::'`` -> ``'a::b'``)."""
    return scope[:-2] if scope else MODEL


def scoped(scope: str, name: str) -> str:
    """The scoped name of ``name`` as written inside the model of prefix ``scope``."""
    if name == MODEL:
        return model_frame(scope)
    if name.endswith("::" + MODEL):
        return scope + name[:-len("::" + MODEL)]
    return scope + name


class FrameGraph:
    """Frames of a model tree by scoped name, with their poses in the top model frame."""

    def __init__(self):
        self.entries: dict[str, FrameEntry] = {}
        self._pose: dict[str, Pose] = {MODEL: Pose()}
        self.canonical: dict[str, str] = {}          # model frame -> canonical link (scoped)

    def add(self, name: str, entry: FrameEntry) -> None:
        if name in self.entries or name == MODEL:
            scope, _, local = name.rpartition("::")
            raise error(entry.el, f"name {local!r} is used twice in model {scope or 'the top model'!r} "
                                  "(links, joints, frames and nested models share one name space)")
        self.entries[name] = entry

    def check(self, name: str, scope: str, at, what: str = "frame") -> str:
        """``name`` (as written in ``scope``) scoped, after checking that the frame exists."""
        full = scoped(scope, name)
        if full != MODEL and full not in self.entries:
            local = [n[len(scope):] for n in self.entries if n.startswith(scope)] + [MODEL]
            where = f"model {model_frame(scope)!r}" if scope else "the model"
            raise error(at, f"unknown {what} {name!r} in {where}{did_you_mean(name, local)}")
        return full

    def validate(self) -> None:
        """Every ``relative_to`` and ``attached_to`` names a frame of its scope."""
        for name, e in list(self.entries.items()):
            at = e.pose_el if e.pose_el is not None else e.el
            for ref in (e.relative_to, e.attached_to if e.kind == "frame" else None):
                if ref is not None:
                    self.check(_local(ref, e.scope), e.scope, at)

    def pose(self, name: str, at=None) -> Pose:
        """Pose of frame ``name`` (scoped) in the top model frame."""
        if name not in self._pose:
            self._pose[name] = self._walk(name, MODEL, at, ())
        return self._pose[name]

    def relative(self, name: str, base: str) -> Pose:
        """Pose of frame ``name`` in frame ``base`` (both scoped)."""
        return self.pose(base).inverse().compose(self.pose(name))

    def _entry_pose(self, name: str, stack) -> Pose:
        """The entry's own pose, in the frame it is relative to (a placement frame undone)."""
        e = self.entries[name]
        if e.placement is None:
            return e.pose
        return e.pose.compose(self._walk(e.placement, name, e.el, ()).inverse())

    def _walk(self, name: str, stop: str, at, stack) -> Pose:
        """Pose of ``name`` in frame ``stop``, following ``relative_to`` (``stop`` must be on the way)."""
        if name == stop:
            return Pose()
        if stop == MODEL and name in self._pose:
            return self._pose[name]
        if name == MODEL:
            self._outside(stack[-1] if stack else name, stop, at)
        if name in stack:
            raise error(self.entries[name].el, f"the poses form a cycle: {' -> '.join(stack + (name,))}")
        e = self.entries[name]
        out = self._walk(e.relative_to, stop, e.pose_el if e.pose_el is not None else at,
                         stack + (name,)).compose(self._entry_pose(name, stack))
        if stop == MODEL:
            self._pose[name] = out
        return out

    def _outside(self, name, stop, at):
        raise error(at, f"placement frame of model {stop!r} is {name!r}, which is not a frame of that model")

    def attached_link(self, name: str, at=None, stack=()) -> str:
        """The link (scoped) frame ``name`` moves with."""
        if name == MODEL or self.entries[name].kind == "model":
            return self.canonical[name]
        e = self.entries[name]
        if e.kind == "link":
            return name
        if name in stack:
            raise error(e.el, f"attached_to forms a cycle: {' -> '.join(stack + (name,))}")
        self.check(_local(e.attached_to, e.scope), e.scope, e.el)
        return self.attached_link(e.attached_to, e.el, stack + (name,))


def _local(full: str, scope: str) -> str:
    """A scoped name as written in ``scope`` (the scope's own frame is ``__model__``)."""
    return full[len(scope):] if full.startswith(scope) and full != model_frame(scope) else MODEL
