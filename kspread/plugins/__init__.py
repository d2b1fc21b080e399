"""In-tree plugins, one module each. A module registers its plugin class with
``kspread.framework.registry.register``; the registry imports every module here."""
