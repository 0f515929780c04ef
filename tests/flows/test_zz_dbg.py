def test_x():
    import sys, importlib
    for m in ["ecoagent", "flows", "crawlers", "generators", "validators", "rated"]:
        mod = sys.modules.get(m)
        print(m, "preloaded" if mod else "", getattr(mod, "__path__", None) if mod else importlib.util.find_spec(m))
