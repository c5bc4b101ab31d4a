#!/usr/bin/env python3
"""Build recall sets from hand-written source files (src/<set>/*.txt).

Source format (one directive per line, '#' comments):
  CONV <conv_id>
  NAME <alias>|<alias>...        (optional; user-name aliases, for the name-frequency stat)
  QDATE <iso>                    default question_date for the conv
  S <YYYY-MM-DD> <HH:MM>         starts a new session at that time
  M <u|a> <key|-> <text>         memory (u -> speaker "user", a -> speaker "agent")
  Q <category> <kind> <qdate|-> <key,key,~oldkey> | <question> | <answer>
Keys prefixed with ~ are the superseded (older) memories of an update question: they are
not evidence, they are checked to be older than the evidence and written to "superseded".
"""
import collections
import datetime as dt
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)


def parse(path):
    conv = None
    names = []
    qdate = None
    sess_no = 0
    sess_time = None
    in_sess = 0
    mems, queries, keys = [], [], {}
    for ln, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.rstrip("\n").strip()
        if not line or line.startswith("#"):
            continue
        tag, _, rest = line.partition(" ")
        where = "%s:%d" % (os.path.basename(path), ln)
        if tag == "CONV":
            conv = rest.strip()
        elif tag == "NAME":
            names = [x.strip() for x in rest.split("|") if x.strip()]
        elif tag == "QDATE":
            qdate = dt.datetime.fromisoformat(rest.strip())
        elif tag == "S":
            sess_no += 1
            sess_time = dt.datetime.strptime(rest.strip(), "%Y-%m-%d %H:%M")
            in_sess = 0
        elif tag == "M":
            sp, key, text = rest.split(" ", 2)
            assert sp in ("u", "a"), where
            ts = sess_time + dt.timedelta(minutes=3 * in_sess + (in_sess * 7) % 5)
            in_sess += 1
            mid = "m%03d" % (len(mems) + 1)
            if key != "-":
                assert key not in keys, "duplicate key %s at %s" % (key, where)
                keys[key] = mid
            mems.append({"conv_id": conv, "mem_id": mid, "session": "session_%d" % sess_no,
                         "timestamp": ts.isoformat(timespec="seconds"),
                         "speaker": "user" if sp == "u" else "agent", "text": text.strip()})
        elif tag == "Q":
            head, q, a = [x.strip() for x in rest.split(" | ")]
            cat, kind, qd, ev = head.split()
            queries.append((where, cat, kind, qd, ev, q, a))
        else:
            raise SystemExit("bad line %s: %r" % (where, line))
    by_id = {m["mem_id"]: m for m in mems}
    out_q = []
    for n, (where, cat, kind, qd, ev, q, a) in enumerate(queries, 1):
        qdt = qdate if qd == "-" else dt.datetime.fromisoformat(qd)
        evid, sup = [], []
        for k in ev.split(","):
            old = k.startswith("~")
            k = k.lstrip("~")
            if k not in keys:
                raise SystemExit("unknown key %s at %s" % (k, where))
            (sup if old else evid).append(keys[k])
        assert evid, where
        for e in evid:
            assert dt.datetime.fromisoformat(by_id[e]["timestamp"]) <= qdt, \
                "evidence after question date at %s" % where
        for s in sup:
            for e in evid:
                assert by_id[s]["timestamp"] < by_id[e]["timestamp"], "superseded newer at " + where
        if kind == "update":
            assert sup, "update question without ~old key at " + where
        rec = {"conv_id": conv, "qid": "%s_q%03d" % (conv, n), "question": q, "answer": a,
               "category": cat}
        if kind != "-":
            rec["kind"] = kind
        rec["evidence"] = evid
        rec["evidence_sessions"] = sorted({by_id[e]["session"] for e in evid},
                                          key=lambda s: int(s.split("_")[1]))
        if sup:
            rec["superseded"] = sup
        rec["question_date"] = qdt.isoformat(timespec="seconds")
        out_q.append(rec)
    return conv, names, mems, out_q


def main(setname):
    src = os.path.join(HERE, setname)
    all_m, all_q = [], []
    print("== %s" % setname)
    for fn in sorted(os.listdir(src)):
        if not fn.endswith(".txt"):
            continue
        conv, names, mems, qs = parse(os.path.join(src, fn))
        assert conv and all(m["conv_id"] == conv for m in mems)
        # timestamps must be non-decreasing (sessions are written in order)
        ts = [m["timestamp"] for m in mems]
        assert ts == sorted(ts), "sessions out of order in " + fn
        nm = ""
        if names:
            hit = sum(1 for m in mems if any(x.lower() in m["text"].lower() for x in names))
            nm = "  name in %d/%d (%.0f%%)" % (hit, len(mems), 100.0 * hit / len(mems))
        print("%-8s memories %3d  questions %3d%s" % (conv, len(mems), len(qs), nm))
        all_m += mems
        all_q += qs
    # global validation
    ids = collections.defaultdict(set)
    for m in all_m:
        assert m["mem_id"] not in ids[m["conv_id"]]
        ids[m["conv_id"]].add(m["mem_id"])
    for q in all_q:
        for e in q["evidence"]:
            assert e in ids[q["conv_id"]], q["qid"]
    assert len({q["qid"] for q in all_q}) == len(all_q)
    dst = os.path.join(OUT, setname)
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(dst, "memories.jsonl"), "w", encoding="utf-8") as f:
        for m in all_m:
            f.write(json.dumps(m, ensure_ascii=False) + "\n")
    with open(os.path.join(dst, "queries.jsonl"), "w", encoding="utf-8") as f:
        for q in all_q:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    print("total memories %d, questions %d" % (len(all_m), len(all_q)))
    print("category:", dict(collections.Counter(q["category"] for q in all_q)))
    if any("kind" in q for q in all_q):
        print("kind:", dict(collections.Counter(q.get("kind") for q in all_q)))
    if setname == "bilingual":
        print("cat x kind:", dict(collections.Counter((q["category"], q.get("kind")) for q in all_q)))


if __name__ == "__main__":
    for s in sys.argv[1:]:
        main(s)
