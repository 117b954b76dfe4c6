"""TAP output for the cross tests written in Python (hooks_cross.py,
sampler_chain.py): numbered results, skips, and the plan at the end."""
import sys

_n = 0
_failed = 0


def ok(cond, what):
    global _n, _failed
    _n += 1
    if not cond:
        _failed += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", _n, what))
    sys.stdout.flush()


def skip(what):
    global _n
    _n += 1
    print("ok %d # SKIP %s" % (_n, what))
    sys.stdout.flush()


def done():
    """Prints the plan; the exit status: 1 when a result failed."""
    print("1..%d" % _n)
    return 1 if _failed else 0
