"""``fw.function``: the tracer that listens to one run of a function (``tracer``), the plan it
becomes (``plan``), the hooks the rest of the framework offers it (``hooks``: replayed effects)
and ``fw.function``'s semantics (``function``).
"""
