#!/usr/bin/env python3
# xmlshape.py: compares the element structure of a nowq -xml document with Grid Engine's recorded one.
#
# Usage: xmlshape.py [--subset] NOWQ_FILE GE_FIXTURE...
#
# With several fixtures Grid Engine's shape is theirs together (one job of
# each kind shows the fields of its kind).
# A document's shape is the set of its element paths, each with its
# attributes' names; the values of the attributes that name a kind of
# element (job_list's state, hostvalue's name, ...) count, those that name
# a host, job or queue do not, and no text counts (ids, dates, hosts and
# loads differ).  Without --subset both documents must have the same
# shape; with it, nowq's must be part of Grid Engine's (Grid Engine prints
# fields nowq has no value for).  Either way the children of an element
# must come in Grid Engine's order.  Exit 0 when they agree, else 1 with
# what differs.
import sys
import xml.etree.ElementTree as ET

# Attributes whose values are names of things, not kinds of element.
VALUE_FREE = {("host", "name"), ("job", "name"), ("queue", "name"), ("jobvalue", "jobid"),
              ("queuevalue", "qname"), ("hard_request", "name"), ("resourcevalue", "name")}


def key(el):
    attrs = []
    for a in sorted(el.attrib):
        if a.startswith("{") or (el.tag, a) in VALUE_FREE:
            attrs.append(a)
        else:
            attrs.append("%s=%s" % (a, el.attrib[a]))
    return el.tag + ("[" + ",".join(attrs) + "]" if attrs else "")


def walk(el, path, paths, order):
    p = path + "/" + key(el)
    paths.add(p)
    kids = []
    for c in el:
        # Each kind once, where it first comes (Grid Engine writes
        # JB_jid_request_list twice).
        k = key(c)
        if k not in kids:
            kids.append(k)
        walk(c, p, paths, order)
    order.setdefault(p, []).append(kids)


def shape(*fns):
    paths, order = set(), {}
    for fn in fns:
        walk(ET.parse(fn).getroot(), "", paths, order)
    return paths, order


def ge_order(seqs):
    """Grid Engine's children of one element, merged in order of first sight."""
    merged = []
    for s in seqs:
        at = -1
        for k in s:
            if k in merged:
                at = merged.index(k)
            else:
                at += 1
                merged.insert(at, k)
    return merged


def main():
    args = sys.argv[1:]
    subset = args and args[0] == "--subset"
    if subset:
        args = args[1:]
    nq, nq_ord = shape(args[0])
    ge, ge_ord = shape(*args[1:])
    bad = []
    for p in sorted(nq - ge):
        bad.append("only in nowq: " + p)
    if not subset:
        for p in sorted(ge - nq):
            bad.append("only in Grid Engine: " + p)
    for p, seqs in nq_ord.items():
        if p not in ge_ord:
            continue
        ref = ge_order(ge_ord[p])
        for s in seqs:
            idx = [ref.index(k) for k in s if k in ref]
            if idx != sorted(idx):
                bad.append("order under %s: %s, Grid Engine's: %s" % (p, " ".join(s), " ".join(ref)))
                break
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
