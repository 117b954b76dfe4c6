#!/usr/bin/env python3
"""Checks on the DOM of report.html as headless Chromium left it
(--dump-dom), for test_host_report.sh. Prints TAP lines, numbered from
FIRST; exits 0 either way (the shell script counts "not ok").

usage: check_report_dom.py DOM FIRST full|oneway|empty"""
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text = [], []

    def all(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.all()

    def find(self, tag=None, id=None, cls=None):
        return [n for n in self.all()
                if (tag is None or n.tag == tag) and (id is None or n.attrs.get("id") == id)
                and (cls is None or cls in (n.attrs.get("class") or "").split())]

    def one(self, **kw):
        found = self.find(**kw)
        return found[0] if found else None

    def content(self):
        return "".join(c if isinstance(c, str) else c.content() for c in self.children)


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#document", [], None)
        self.start_tags = []

    def handle_starttag(self, tag, attrs):
        self.start_tags.append(tag)
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.start_tags.append(tag)
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


n = int(sys.argv[2]) - 1


def ok(cond, what):
    global n
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, what))


def cells(row):
    return [td.content() for td in row.find(tag="td")]


HOSTILE = "</script><img src=x onerror=alert(1)>"

t = Tree()
with open(sys.argv[1], encoding="utf-8") as f:
    t.feed(f.read())
doc = t.root
body = doc.one(tag="body")
ok(body is not None and not doc.find(id="report-errors"),
   "the page ran without an error (no #report-errors)")
ok(body is not None and "img" not in t.start_tags, "no <img> element anywhere: recorded text stays text")

if sys.argv[3] == "oneway":
    ok(body is not None and body.attrs.get("data-report") == "done", "the page finished (data-report=done)")
    src = doc.one(id="latency")
    ok(src is not None and "One way (device send to host receive" in src.content(),
       "without round trips the latency is one way")
    head = doc.one(id="run-header")
    ok(head is not None and "not in the recording (no HELLO from the device" in head.content(),
       "a recording without summary.json's device says the device is not in it")
    pct = doc.one(id="latency-percentiles")
    ok(pct is not None and cells(pct.one(tag="tbody")) == ["2 ms", "9 ms", "9 ms", "9 ms"],
       "one-way p50 2 ms, p99 and max 9 ms")
    worst = doc.one(id="worst-frames")
    rows = worst.find(tag="tr", cls="worst-frame") if worst else []
    ok([cells(r)[0] for r in rows] == ["3", "1", "2", "4"] and cells(rows[0])[2] == "9",
       "4 worst frames, frame 3's 9 ms first, the frame without a receive left out")
    ok(doc.one(id="flame") is not None and not doc.find(id="flame-graph")
       and "No render sampler windows" in doc.one(id="flame").content(),
       "no flame graph, said so")
    sys.exit(0)

if sys.argv[3] == "empty":
    notice = doc.one(id="empty-notice")
    ok(notice is not None and "empty" in notice.content(), "an empty recording says it is empty")
    ok(body is not None and body.attrs.get("data-report") == "empty", "the page finished (data-report=empty)")
    ok(not doc.find(tag="canvas") and not doc.find(id="latency-histogram")
       and not doc.find(id="flame-graph") and not doc.find(id="worst-frames"),
       "no charts or tables pretend to show data")
    sys.exit(0)

ok(body is not None and body.attrs.get("data-report") == "done", "the page finished (data-report=done)")
head = doc.one(id="run-header")
head_text = head.content() if head else ""
ok("tcp" in head_text and "-1.2 µs" in head_text and "±45 µs" in head_text,
   "the header has the transport and the clock offset with its error from summary.json")
ok("perflinkd 0.1.0, wire version 1, deadline 2000 ms" in head_text,
   "and the device as its HELLO said (summary.json's device)")
drops = doc.one(id="drop-table")
drop_rows = {c[0]: c[1] for c in (cells(r) for r in drops.find(tag="tr")) if len(c) > 1} if drops else {}
ok(drop_rows.get("frames held (link busy)") == "3" and drop_rows.get("frames lost") == "1"
   and drop_rows.get("held frames replaced by a newer one") == "1"
   and drop_rows.get("messages dropped") == "2"
   and drop_rows.get("skipped lines of frames.csv") == "1",
   "drops: held 3, replaced 1, lost 1, messages 2, a skipped frames.csv line")
ok(drop_rows.get("stage calls not counted by raptor (812)") == "4"
   and drop_rows.get("reports of raptor (812) perflinkd had no room for") == "1"
   and drop_rows.get("stage calls past the call-site table of raptor (812)") == "0"
   and drop_rows.get("timed stage events of raptor (812) dropped (full ring)") == "5"
   and not [k for k in drop_rows if HOSTILE + " (900)" in k],
   "drops: the profiler's 4 uncounted calls, 1 report perflinkd dropped, 5 events lost to the ring; "
   "none for a process whose report does not say")
pct = doc.one(id="latency-percentiles")
ok(pct is not None and cells(pct.one(tag="tbody"))[:1] == ["11.1 ms"] and cells(pct.one(tag="tbody"))[3] == "120 ms",
   "latency p50 11.1 ms, max 120 ms")
hist = doc.one(id="latency-histogram")
ok(hist is not None and hist.find(tag="canvas"), "the latency histogram is drawn (#latency-histogram canvas)")
series = doc.one(id="latency-series")
ok(series is not None and series.find(tag="canvas"), "the latency time series is drawn")
marks = doc.one(id="stall-markers")
ok(marks is not None and marks.content().startswith("1 stall windows shaded"), "its stall marker is listed")
worst = doc.one(id="worst-frames")
rows = worst.find(tag="tr", cls="worst-frame") if worst else []
ok(len(rows) == 10, "10 worst frames (of 20)")
first = rows[0] if rows else None
ok(first is not None and cells(first)[:3] == ["7", "0.198", "120"], "the worst is frame 7 at 120 ms")
events = [e.content() for e in first.find(cls="device-event")] if first else []
ok(len(events) == 1 and "avpu_wait_irq 80 ms (median 2 ms" in events[0] and "thread 813" in events[0],
   "frame 7 shows the one slow call during it (80 ms, median 2 ms), not the usual ones")
stalls = [e.content() for e in first.find(cls="stall")] if first else []
ok(len(stalls) == 1 and HOSTILE in stalls[0] and "writeback 50 ms" in stalls[0] and "bully dd (77)" in stalls[0],
   "frame 7 shows the stall that overlaps it, its victim's hostile comm as text")
ok(all(not r.find(cls="device-event") and not r.find(cls="stall") for r in rows[1:]),
   "the other worst frames have nothing unusual")
stage = doc.one(id="stage-table")
srows = [cells(r) for r in stage.find(tag="tr", cls="stage-row")] if stage else []
ok([r[:4] for r in srows] == [["812", "raptor", "avpu_wait_irq", "500"], ["812", "raptor", "avpu_flush", "7"],
                              ["900", HOSTILE, "enc", "5"]],
   "the stage table has its three rows, the hostile comm as text")
ok(len(srows) == 3 and srows[0][6:] == ["5,000", "6", "99.9 %"],
   "per-call wall 5,000 µs and CPU 6 µs: 99.9 % waiting")
fg = doc.one(id="flame-graph")
titles = [x.content() for x in fg.find(tag="title")] if fg else []
ok(fg is not None and fg.find(tag="svg") and fg.find(tag="rect")
   and any(x.startswith("hot_a ") for x in titles) and any(x.startswith("renderer (") for x in titles),
   "the flame graph has the render thread's functions (hot_a) under its process")
note = doc.one(id="flame-note")
ok(note is not None and note.content().startswith("200 samples in 3 windows, merged"),
   "the flame graph merges the three windows' 200 samples")
res = doc.one(id="resource-charts")
ok(res is not None and len(res.find(cls="resource-chart")) == 1 and res.find(tag="canvas")
   and "raptor (812)" in res.content(), "one resource chart, for raptor (812)")
