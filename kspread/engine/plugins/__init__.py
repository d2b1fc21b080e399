"""In-tree plugins, one module each. A module registers its plugin class with
``kspread.engine.framework.registry.register``; the registry imports every module here."""
