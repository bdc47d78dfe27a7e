# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Reads `optrace export --perfetto` output with Perfetto's schema (the
subset in perfetto_subset.proto, compiled with Debian's protoc at run time)
and `optrace export --chrome` output, each into the same plain form, so that
the two can be compared:

    Timeline.processes  {pid: name}
    Timeline.threads    {(pid, tid): name}
    Timeline.slices     [Slice], each on a track named (pid, track name)
    Timeline.flows      Counter of (from slice key, to slice key)

Perfetto's side is read as trace_processor reads it: the packets'
interned data applies on their sequence from the packet that holds it
(SEQ_INCREMENTAL_STATE_CLEARED starts it anew), each track's events are
sorted by timestamp (the file's order kept among equal ones) and a slice is
a begin and the end that closes it. Chrome's side: "X" events are slices,
"s"/"f" flows bind to the innermost slice that encloses their time.

Run as a script, `perfetto_read.py CHROME.json TRACE.pftrace [--size-ratio R]`
compares the two and exits 0 if they hold the same (tests/unit/test_perfetto.c).
"""

import collections
import decimal
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = "perfetto_subset.proto"
PROTOC = "protoc"

SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2
TYPE_SLICE_BEGIN = 1
TYPE_SLICE_END = 2
GPU_TRACK_TID = 0x40000000

_schema = None


def missing_tools():
    """Why the schema cannot be compiled and loaded here, or None."""
    if not shutil.which(PROTOC):
        return "no protoc (Debian's protobuf-compiler; scripts/deps.sh)"
    try:
        importlib.import_module("google.protobuf")
    except ImportError:
        return "no google.protobuf (Debian's python3-protobuf; scripts/deps.sh)"
    return None


def schema():
    """The module protoc generates from perfetto_subset.proto, in a temporary
    directory."""
    global _schema
    if _schema is None:
        out = tempfile.mkdtemp(prefix="optrace-proto-")
        try:
            subprocess.run([PROTOC, f"--proto_path={HERE}",
                            f"--python_out={out}", SCHEMA], check=True,
                           capture_output=True, text=True)
            sys.path.insert(0, out)
            try:
                _schema = importlib.import_module("perfetto_subset_pb2")
            finally:
                sys.path.remove(out)
        finally:
            shutil.rmtree(out, ignore_errors=True)
    return _schema


class Slice(collections.namedtuple(
        "Slice", "pid track category name ts dur args")):
    """args: a tuple of sorted (name, value) pairs; lists for arrays."""

    def key(self):
        return (self.pid, self.track, self.category, self.name, self.ts,
                self.dur)


class Timeline:
    def __init__(self):
        self.processes = {}
        self.threads = {}
        self.slices = []
        self.flows = collections.Counter()
        self.problems = []  # what a reader found wrong in the file itself

    def slice_counts(self, categories=None):
        return collections.Counter(
            s for s in self.slices
            if categories is None or s.category in categories)


def _frozen(value):
    return tuple(value) if isinstance(value, list) else value


def _args(pairs):
    return tuple(sorted((k, _frozen(v)) for k, v in pairs.items()))


# ---- Perfetto ------------------------------------------------------------


class _Sequence:
    def __init__(self):
        self.valid = False
        self.tables = {}

    def clear(self):
        self.valid = True
        self.tables = {"category": {}, "name": {}, "arg": {}, "value": {}}

    def define(self, table, iid, text, problems):
        if iid in self.tables[table]:
            problems.append(f"{table} iid {iid} interned twice")
        self.tables[table][iid] = text

    def get(self, table, iid, problems):
        if iid not in self.tables[table]:
            problems.append(f"{table} iid {iid} used before it was interned")
            return f"?{iid}"
        return self.tables[table][iid]


def _annotation_value(annotation, sequence, problems):
    which = annotation.WhichOneof("value")
    if which == "uint_value":
        return annotation.uint_value
    if which == "bool_value":
        return annotation.bool_value
    if which == "string_value_iid":
        return sequence.get("value", annotation.string_value_iid, problems)
    return [_annotation_value(item, sequence, problems)
            for item in annotation.array_values]


def read_perfetto(path):
    """A Timeline, with what it held besides: .packets (how many) and
    .first_flags (the first packet's sequence_flags)."""
    pb = schema()
    with open(path, "rb") as f:
        trace = pb.Trace.FromString(f.read())
    timeline = Timeline()
    problems = timeline.problems
    sequences = collections.defaultdict(_Sequence)
    tracks = {}  # uuid -> (pid, name)
    timeline.track_names = tracks.values()
    events = collections.defaultdict(list)  # uuid -> [(ts, order, event)]
    timeline.packets = len(trace.packet)
    timeline.clears = 0
    timeline.first_flags = trace.packet[0].sequence_flags if trace.packet \
        else None
    for order, packet in enumerate(trace.packet):
        if not packet.HasField("trusted_packet_sequence_id"):
            problems.append(f"packet {order} has no sequence id")
        sequence = sequences[packet.trusted_packet_sequence_id]
        if packet.sequence_flags & SEQ_INCREMENTAL_STATE_CLEARED:
            sequence.clear()
            timeline.clears += 1
        if packet.HasField("interned_data"):
            if not sequence.valid:
                problems.append(f"packet {order} interns before the state "
                                "was cleared")
                sequence.clear()
            data = packet.interned_data
            for table, entries in (("category", data.event_categories),
                                   ("name", data.event_names),
                                   ("arg", data.debug_annotation_names)):
                for entry in entries:
                    sequence.define(table, entry.iid, entry.name, problems)
            for entry in data.debug_annotation_string_values:
                sequence.define("value", entry.iid,
                                entry.str.decode("utf-8"), problems)
        which = packet.WhichOneof("data")
        if which == "track_descriptor":
            d = packet.track_descriptor
            if d.uuid in tracks:
                problems.append(f"track {d.uuid} described twice")
            if d.HasField("process"):
                timeline.processes[d.process.pid] = d.process.process_name
                tracks[d.uuid] = (d.process.pid, d.process.process_name)
            elif d.HasField("thread"):
                key = (d.thread.pid, d.thread.tid)
                timeline.threads[key] = d.thread.thread_name
                tracks[d.uuid] = (d.thread.pid, d.thread.thread_name)
            else:
                parent = tracks.get(d.parent_uuid)
                if parent is None:
                    problems.append(f"track {d.uuid} before its parent")
                    continue
                tracks[d.uuid] = (parent[0], d.name)
        elif which == "track_event":
            e = packet.track_event
            if e.track_uuid not in tracks:
                problems.append(f"event on undescribed track {e.track_uuid}")
                continue
            if e.type == TYPE_SLICE_BEGIN:
                if not packet.sequence_flags & SEQ_NEEDS_INCREMENTAL_STATE:
                    problems.append(f"packet {order} uses interned data "
                                    "without SEQ_NEEDS_INCREMENTAL_STATE")
                begin = (
                    [sequence.get("category", c, problems)
                     for c in e.category_iids],
                    sequence.get("name", e.name_iid, problems),
                    _args({sequence.get("arg", a.name_iid, problems):
                           _annotation_value(a, sequence, problems)
                           for a in e.debug_annotations}),
                    list(e.flow_ids), list(e.terminating_flow_ids))
                events[e.track_uuid].append((packet.timestamp, order, begin))
            elif e.type == TYPE_SLICE_END:
                events[e.track_uuid].append((packet.timestamp, order, None))
            else:
                problems.append(f"event of type {e.type}")
    flow_from, flow_to = {}, {}
    for uuid, track_events in events.items():
        pid, track = tracks[uuid]
        stack = []
        for ts, order, begin in sorted(track_events,
                                       key=lambda x: (x[0], x[1])):
            if begin is not None:
                stack.append((ts, begin))
                continue
            if not stack:
                problems.append(f"an end without a begin on {track!r}")
                continue
            start, (categories, name, args, out, into) = stack.pop()
            if len(categories) != 1:
                problems.append(f"{name!r} has categories {categories}")
            s = Slice(pid, track, categories[0] if categories else None,
                      name, start, ts - start, args)
            timeline.slices.append(s)
            for flow in out:
                if flow in flow_from:
                    problems.append(f"flow {flow} leaves twice")
                flow_from[flow] = s.key()
            for flow in into:
                if flow in flow_to:
                    problems.append(f"flow {flow} arrives twice")
                flow_to[flow] = s.key()
        if stack:
            problems.append(f"{len(stack)} begins without an end on "
                            f"{track!r}")
    for flow in set(flow_from) | set(flow_to):
        if flow not in flow_from or flow not in flow_to:
            problems.append(f"flow {flow} has one end only")
            continue
        timeline.flows[(flow_from[flow], flow_to[flow])] += 1
    return timeline


# ---- Chrome ---------------------------------------------------------------


def _ns(us):
    """Chrome's microseconds (three decimals) as integer nanoseconds."""
    return int((us * 1000).to_integral_value())


def _enclosing(slices, t):
    """The innermost of slices (on one thread) whose span holds t."""
    best = None
    for s in slices:
        if s.ts <= t <= s.ts + s.dur and (
                best is None or (s.ts, -s.dur) > (best.ts, -best.dur)):
            best = s
    return best


def read_chrome(path):
    with open(path) as f:
        root = json.load(f, parse_float=decimal.Decimal)
    timeline = Timeline()
    names = {}
    by_thread = collections.defaultdict(list)
    flow_ends = collections.defaultdict(dict)
    for e in root["traceEvents"]:
        ph, pid, tid = e["ph"], e["pid"], e["tid"]
        if ph == "M" and e["name"] == "process_name":
            timeline.processes[pid] = e["args"]["name"]
        elif ph == "M" and e["name"] == "thread_name":
            names[(pid, tid)] = e["args"]["name"]
        elif ph == "X":
            by_thread[(pid, tid)].append(e)
        elif ph in ("s", "f"):
            flow_ends[e["id"]][ph] = (pid, tid, _ns(e["ts"]))
    slices = collections.defaultdict(list)
    for (pid, tid), thread_events in by_thread.items():
        track = names.get((pid, tid), f"thread {tid}")
        for e in thread_events:
            s = Slice(pid, track, e.get("cat"), e["name"], _ns(e["ts"]),
                      _ns(e["dur"]), _args(e.get("args", {})))
            slices[(pid, tid)].append(s)
            timeline.slices.append(s)
    # GPU streams are pseudo-threads there (chrome.c's GPU_TRACK_TID and
    # above): threads are the real ones.
    timeline.threads = {k: v for k, v in names.items()
                        if k[1] < GPU_TRACK_TID}
    for flow, ends in flow_ends.items():
        if set(ends) != {"s", "f"}:
            timeline.problems.append(f"flow {flow} has one end only")
            continue
        (pid, tid, t), (pid2, tid2, t2) = ends["s"], ends["f"]
        source = _enclosing(slices[(pid, tid)], t)
        target = _enclosing(slices[(pid2, tid2)], t2)
        if source is None or target is None:
            timeline.problems.append(f"flow {flow} binds to no slice")
            continue
        timeline.flows[(source.key(), target.key())] += 1
    return timeline


# ---- comparing -------------------------------------------------------------


def _counter_diff(what, chrome, perfetto, limit=8):
    lines = []
    for key in list((chrome - perfetto).keys())[:limit]:
        lines.append(f"{what} only in Chrome's: {key}")
    for key in list((perfetto - chrome).keys())[:limit]:
        lines.append(f"{what} only in Perfetto's: {key}")
    return lines


def compare(chrome, perfetto):
    """What differs between two Timelines, as lines; [] when nothing."""
    lines = [f"Chrome: {p}" for p in chrome.problems[:8]]
    lines += [f"Perfetto: {p}" for p in perfetto.problems[:8]]
    if chrome.processes != perfetto.processes:
        lines.append(f"processes: Chrome {chrome.processes}, "
                     f"Perfetto {perfetto.processes}")
    if chrome.threads != perfetto.threads:
        lines.append(f"threads: Chrome {chrome.threads}, "
                     f"Perfetto {perfetto.threads}")
    lines += _counter_diff("slice", chrome.slice_counts(),
                           perfetto.slice_counts())
    lines += _counter_diff("flow", chrome.flows, perfetto.flows)
    return lines


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and
                                   argv[3] != "--size-ratio"):
        print("usage: perfetto_read.py CHROME.json TRACE.pftrace "
              "[--size-ratio R]", file=sys.stderr)
        return 2
    why = missing_tools()
    if why:
        print(f"SKIP: {why}")
        return 77
    chrome, perfetto = read_chrome(argv[1]), read_perfetto(argv[2])
    lines = compare(chrome, perfetto)
    if len(argv) == 5:
        ratio = os.path.getsize(argv[2]) / os.path.getsize(argv[1])
        if ratio > float(argv[4]):
            lines.append(f"size: {ratio:.3f} of Chrome's, over {argv[4]}")
    if perfetto.first_flags is None or \
            not perfetto.first_flags & SEQ_INCREMENTAL_STATE_CLEARED:
        lines.append("the first packet does not clear the incremental state")
    for line in lines:
        print(line)
    print(f"{len(perfetto.slices)} slices, {sum(perfetto.flows.values())} "
          f"flows, {perfetto.packets} packets, {perfetto.clears} clears: "
          f"{'different' if lines else 'the same'}")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
