"""``fw.function``: the tracer that listens to one run of a function (``tracer``, a
``framework.engine.recording.Listener``), the plan it becomes (``plan``) and ``fw.function``'s
semantics (``function``). Nothing below it knows about tracing: the engine announces effects
(``framework.engine.context.replayed``) to whoever traces, as it announces ops to every listener.
"""
