#!/usr/bin/env python3
"""docclaims.py: checks the manuals and documents against the built programs: the settings the configuration pages list are those the daemons accept, and no page calls a command, option, setting or feature absent that the programs have."""

import os
import re
import subprocess
import sys
import tempfile

USAGE = "usage: docclaims.py settings|absent|named SRCDIR BINDIR [FILE...]"

# The programs a page may name; their options come from their usage text.
CLIENTS = ["qsub", "qstat", "qdel", "qhold", "qrls", "qhost", "qacct", "qconf",
           "qalter", "qmod", "reserve", "unreserve", "qwait", "qrsh", "nowq"]
DAEMONS = ["qmaster", "execd"]


def run(argv, timeout=10):
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout, text=True)
    except subprocess.TimeoutExpired:
        return 124, "", "timed out"
    return p.returncode, p.stdout, p.stderr


# ---- settings: what the configuration manuals list, and the parsers' word on it

def mdoc_settings(path):
    """The keys a configuration manual's SETTINGS section lists, as
    (section, key): section is "" at the top, else the block (queue, pe)
    whose item holds a nested list of keys."""
    keys, sec, depth, block = [], None, 0, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith(".Sh "):
                sec = line[4:].strip()
                continue
            if sec != "SETTINGS":
                continue
            if line.startswith(".Bl"):
                depth += 1
            elif line.startswith(".El"):
                block.pop(depth, None)
                depth -= 1
            elif line.startswith(".It Ic "):
                # ".It Ic a No = Ar x , Ic b No = Ar y": every Ic of the head.
                words = line.split()
                names = [words[i + 1] for i in range(len(words) - 1) if words[i] == "Ic"]
                outer = block.get(depth - 1, "")
                if depth == 1:
                    block[depth] = names[0]
                for n in names:
                    keys.append(("" if depth == 1 else outer, n))
                # A block item (queue NAME { ... }) is not itself a key.
                if depth == 1 and "Ar" in words[3:4] and "{" in line:
                    keys.pop()
    return keys


def probe_qmaster(binary, body):
    """qmaster --check with a configuration holding body: the first line of
    its complaint.  The spool does not exist, so nothing is created, and a
    good file ends in "No such file"."""
    with tempfile.TemporaryDirectory() as d:
        conf = os.path.join(d, "qmaster.conf")
        with open(conf, "w") as f:
            f.write('spool_dir = "%s/none"\n%s\n' % (d, body))
        _, out, err = run([binary, "-c", conf, "--check"])
        return (err + out).strip()


def probe_execd(binary, line):
    """execd -f with an execd.ini holding line and then a key no execd has,
    so it stops at parsing whatever line is: its complaint."""
    with tempfile.TemporaryDirectory() as d:
        ini = os.path.join(d, "execd.ini")
        with open(ini, "w") as f:
            f.write("[execd]\n%s\nzz_no_such_key = 1\n" % line)
        _, out, err = run([binary, "-f", "-c", ini], timeout=5)
        return (err + out).strip()


def qmaster_has(binbin, section, key, value="1"):
    if section:
        body = '%s "x" {\n%s = %s\n}\nqueue "all.q" {}' % (section, key, value)
        if section == "queue":
            body = 'queue "x" {\n%s = %s\n}' % (key, value)
    else:
        body = '%s = %s\nqueue "all.q" {}' % (key, value)
    out = probe_qmaster(binbin("qmaster"), body)
    return "no such option '%s'" % key not in out, out


def execd_has(binbin, key, value="x"):
    out = probe_execd(binbin("execd"), "%s = %s" % (key, value))
    return 'unknown key "%s"' % key not in out, out


def check_settings(src, binbin):
    bad = 0
    for section, key in mdoc_settings(os.path.join(src, "doc/qmaster.conf.5")):
        ok, out = qmaster_has(binbin, section, key)
        if not ok:
            where = "%s section " % section if section else ""
            print("qmaster.conf.5 lists the %ssetting %s, but qmaster says: %s" % (where, key, out))
            bad = 1
    for section, key in mdoc_settings(os.path.join(src, "doc/execd.ini.5")):
        ok, out = execd_has(binbin, key)
        if not ok:
            print("execd.ini.5 lists the setting %s, but execd says: %s" % (key, out))
            bad = 1
    # The other way: every key the parsers know is on the page.
    for page, source, rx in (
            ("qmaster.conf.5", "common/qmconf.c", r'(?:\{ |CFG_(?:INT|STR|BOOL|STR_LIST|FLOAT)\()"(\w+)"'),
            ("execd.ini.5", "common/execdconf.c", r'\{ "(\w+)", EK_')):
        listed = set(k for _, k in mdoc_settings(os.path.join(src, "doc", page)))
        with open(os.path.join(src, source), encoding="utf-8") as f:
            parsed = set(re.findall(rx, f.read()))
        for key in sorted(parsed - listed):
            print("%s takes the setting %s, but %s does not list it" % (source, key, page))
            bad = 1
    return bad


# ---- absent: sentences that say something is missing

# What says "this is missing".  Other negations ("has no", "is not
# checked") are too common in true sentences to be read mechanically.
ABSENT = re.compile(
    r"\b(?:not|no|never)\b[^;]*\bthis release\b"
    r"|\(coming\)"
    r"|\b(?:not|cannot)\b(?:\s+\S+){0,6}?\s+yet\b"
    r"|\bthere (?:is|are) no\b"
    r"|\b(?:is|are) not (?:accepted|provided|supported|implemented|used|available)\b"
    r"|\bnot supported\b|\bunused\b|\baccepts only\b"
    r"|\bnothing is (?:suspended|vacated)\b",
    re.I)
# How close (in characters) a feature's name must be to such words.
NEAR = 60
# A marked-up name is called missing by the words right before or after it.
NEG_BEFORE = re.compile(r"(?<!\bhas )(?<!\bhave )\bno\s+(?:\S+\s+)?[('`]*$", re.I)
NEG_AFTER = re.compile(r"^\W{0,3}\s*(?:command\s+)?(?:(?:is|are)\s+(?:not|never)\s+(?:used|accepted|supported|"
                       r"provided|available|implemented|in this release)|(?:is\s+)?unused|accepts\s+only)\b", re.I)

# Features a sentence may call missing without naming an option or a
# setting, each with the setting that has it (section, key, value).
FEATURES = [
    (re.compile(r"\bmunge\b", re.I), ("", "auth", '"munge"'), "munge authentication"),
    (re.compile(r"\bhot standby\b", re.I), ("", "masters", "{}"), "the hot standby"),
    (re.compile(r"\b(?:keyboard|logged-in users|time windows|site commands?)\b", re.I),
     ("execd", "idle_keyboard", "5"), "the idle policies beside the load"),
    (re.compile(r"\bsuspended or vacated\b", re.I), ("execd", "owner_returns", "vacate"),
     "owner_returns"),
]
# Hosts declared lost: said without any of the words above.
LOST = re.compile(r"\b(?:not|never|does not)\b(?:\s+\S+){0,3}?\s+declared?\s+(?:hosts?\s+)?lost\b", re.I)

SPAN = re.compile(r"\*\*(.+?)\*\*|'`(.+?)`'|`([^`\n]+)`")


def page_text(path):
    """A page as text whose marked-up words stay marked: mdoc through
    mandoc's markdown, markdown as it is, without its code blocks."""
    if re.search(r"\.[1-9]$", path):
        rc, out, err = run(["mandoc", "-T", "markdown", path])
        if rc != 0:
            raise SystemExit("mandoc failed on %s: %s" % (path, err))
        return out
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def sentences(text):
    for para in re.split(r"\n\s*\n|\n\s*[-*|]\s", text):
        para = " ".join(para.split())
        for s in re.split(r"(?<=[.;:])\s+(?=[A-Z*'`(])", para):
            yield s


def help_flags(binbin, cmd, cache={}):
    if cmd not in cache:
        text, works = "", set()
        for flag in ("--help", "-help"):
            rc, out, _ = run([binbin(cmd), flag])
            if rc == 0 and out:
                text = out
                works.add(flag)
                break
        # The usage text need not list the option that prints it.
        cache[cmd] = works | set(m.group(1) for m in re.finditer(r"(?:^|[][\s|(])(--?[A-Za-z][\w-]*)", text))
    return cache[cmd]


def page_command(path):
    base = os.path.basename(path)
    m = re.match(r"^([a-z]+)\.[18]$", base)
    return m.group(1) if m and m.group(1) in CLIENTS + DAEMONS else None


def check_absent(src, binbin, files):
    known = {}
    for section, key in mdoc_settings(os.path.join(src, "doc/qmaster.conf.5")):
        known[key] = ("qmaster", section)
    for section, key in mdoc_settings(os.path.join(src, "doc/execd.ini.5")):
        known.setdefault(key, ("execd", section))

    def has_setting(section, key, value):
        if section == "execd":
            # Taken as given when the complaint is the next line's.
            out = probe_execd(binbin("execd"), "%s = %s" % (key, value.strip('"')))
            return ":3:" in out
        ok, out = qmaster_has(binbin, section, key, value)
        # A value the parser refuses by name is a feature it lacks.
        return ok and not re.search(r"\b%s\b[^:]*\bis not\b" % re.escape(key), out)

    bad = 0
    for path in files:
        name = os.path.relpath(path, src)
        own = page_command(path)
        for s in sentences(page_text(path)):
            why = []
            for m in SPAN.finditer(s):
                # Only what the words next to it call missing: "there is
                # no X", "X is not used", "X accepts only".
                if not (NEG_BEFORE.search(s[:m.start()]) or NEG_AFTER.match(s[m.end():])):
                    continue
                span = (m.group(1) or m.group(2) or m.group(3)).replace("*", "")
                words = span.split()
                if not words:
                    continue
                w0 = words[0]
                if w0 in CLIENTS + DAEMONS:
                    opt = words[1].rstrip(",;:.") if len(words) > 1 and words[1].startswith("-") else None
                    if opt is None:
                        if len(words) == 1:
                            why.append("%s is a command of this release" % w0)
                    elif opt in help_flags(binbin, w0):
                        why.append("%s accepts %s" % (w0, opt))
                elif re.match(r"^--?[A-Za-z]", w0) and own:
                    opt = w0.rstrip(",;:.")
                    if opt in help_flags(binbin, own):
                        why.append("%s accepts %s" % (own, opt))
                elif w0 in known and len(words) <= 3:
                    prog, section = known[w0]
                    why.append("%s is a setting of %s" % (w0, "execd.ini" if prog == "execd" else
                               "qmaster.conf" + (" (%s)" % section if section else "")))
            plain = s.replace("*", "").replace("`", "")
            near = [m.span() for m in ABSENT.finditer(plain)]
            for rx, (section, key, value), what in FEATURES:
                hit = any(abs(f.start() - b) <= NEAR or abs(f.end() - a) <= NEAR or a <= f.start() < b
                          for f in rx.finditer(plain) for a, b in near)
                if hit and has_setting(section, key, value):
                    why.append("%s is in this release (%s = %s is accepted)" % (what, key, value))
            if LOST.search(plain) and has_setting("", "host_timeout", "30"):
                why.append("hosts are declared lost (host_timeout is accepted)")
            if why:
                print("%s: \"%s\": %s" % (name, s, "; ".join(sorted(set(why)))))
                bad = 1
    return bad


# Words that make a sentence about what nowq lacks or refuses, or about
# Grid Engine: the options it names need not be nowq's.
ELSEWHERE = re.compile(r"Grid Engine|\brefus|\bnot\b|\bno\b|\bnever\b|\bunknown\b|\bwithout\b", re.I)


def check_named(src, binbin, files):
    """Every option a page names for one of nowq's commands, as in
    'qstat -j', is one that command's usage lists."""
    bad = 0
    for path in files:
        name = os.path.relpath(path, src)
        for s in sentences(page_text(path)):
            if ELSEWHERE.search(s):
                continue
            for m in SPAN.finditer(s):
                words = (m.group(1) or m.group(2) or m.group(3)).replace("*", "").split()
                if len(words) < 2 or words[0] not in CLIENTS + DAEMONS or not re.match(r"^--?[A-Za-z]", words[1]):
                    continue
                opt = words[1].rstrip(",;:.")
                if opt not in help_flags(binbin, words[0]):
                    print("%s names %s %s, which %s --help does not list: \"%s\"" % (name, words[0], opt, words[0], s))
                    bad = 1
    return bad


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("settings", "absent", "named"):
        print(USAGE, file=sys.stderr)
        return 2
    src, bindir = sys.argv[2], sys.argv[3]

    def binbin(cmd):
        return os.path.join(bindir, cmd)

    if sys.argv[1] == "settings":
        return check_settings(src, binbin)
    if sys.argv[1] == "named":
        return check_named(src, binbin, sys.argv[4:])
    return check_absent(src, binbin, sys.argv[4:])


if __name__ == "__main__":
    sys.exit(main())
