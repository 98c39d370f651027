"""The runner's config in one place: ``reading`` (a TOML file, its ``--set`` overrides and the
resolved config), ``fields`` (how a key is declared, checked and turned into its one-line
error), ``schema`` (the top-level keys, the model, the data, the metrics) and ``optimizers``
(the optimizer groups and schedules). Every name a config uses is looked up in the library's
registries; nothing here lists names itself.
"""
