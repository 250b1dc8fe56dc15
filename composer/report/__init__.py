"""What a run shows: the HTML report (:mod:`.html`), its 3-D view (:mod:`.scene` -> :mod:`.viewer`,
``assets/viewer.js``; :mod:`.gltf` for the animated GLB), pictures (:mod:`.pictures`) and
plots (:mod:`.plots`)."""
