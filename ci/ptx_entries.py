#!/usr/bin/env python3
"""ci/ptx_entries.py OLD.ptx NEW.ptx -- which kernels of one file a change moved (ci/ptx_same.sh
--kernels calls it for a file whose PTX differs). Kernels are paired by their demangled name
without the parameter list (c++filt; a parameter added or changed keeps the pair), each entry's
body compared after its registers and labels are renumbered in order of first use (so that a
kernel elsewhere in the file taking more registers does not count, while swapped operands or
another instruction do) and its own name blanked. Verdicts, one line a kernel:
  same        identical after renumbering (the same machine code from the same ptxas)
  same-body   the parameter declarations differ (one added, resized), the body is identical
  DIFFERS     the body differs (the first differing line is shown)
  only-old / only-new   no partner in the other file (or two kernels of a file share the name)
Last line: the counts. Exit 0 every paired kernel same or same-body and none unpaired; 1 some
differ or are unpaired; 2 bad usage or unreadable input.
"""
import re
import subprocess
import sys

REG = re.compile(r"%(r|rd|rs|f|fd|p|h|hh)([0-9]+)\b")
LABEL = re.compile(r"\$L__BB[0-9_]+")


def entries(text):
    """{mangled name: (params text, body text)} of every .entry of a PTX file."""
    out = {}
    for m in re.finditer(r"^(?:\.(?:visible|weak)\s+)*\.entry (\S+)\(", text, re.M):
        start = m.end()
        close = text.index(")", start)
        end = text.find("\n}\n", close)
        out[m.group(1)] = (text[start:close], text[close:end if end >= 0 else len(text)])
    return out


def renumber(body, name):
    body = body.replace(name, "K")
    seen, per_class = {}, {}

    def reg(m):
        key = m.group(0)
        if key not in seen:
            n = per_class.get(m.group(1), 0)
            per_class[m.group(1)] = n + 1
            seen[key] = "%%%s%d" % (m.group(1), n)
        return seen[key]

    labels = {}

    def lab(m):
        return labels.setdefault(m.group(0), "$L%d" % len(labels))

    body = REG.sub(reg, body)
    body = LABEL.sub(lab, body)
    # the declarations' counts (.reg .b32 %r<790>) follow the numbering: drop them
    return re.sub(r"^\s*\.reg .*$", "", body, flags=re.M)


def demangled(names):
    if not names:
        return {}
    p = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True, check=True)
    return dict(zip(names, p.stdout.splitlines()))


def keyed(ents):
    """{demangled name without its parameter list: mangled name}; None where two collide."""
    out = {}
    for mangled, pretty in demangled(sorted(ents)).items():
        cut = len(pretty)
        if pretty.endswith(")"):  # the parameter list: the '(' matching the last ')'
            depth = 0
            for i in range(len(pretty) - 1, -1, -1):
                depth += {")": 1, "(": -1}.get(pretty[i], 0)
                if depth == 0:
                    cut = i
                    break
        key = pretty[:cut]
        out[key] = None if key in out else mangled
    return out


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__.split("\n\n")[0] + "\n")
        return 2
    try:
        old, new = (entries(open(f, encoding="utf-8").read()) for f in argv[1:])
        ko, kn = keyed(old), keyed(new)
    except (OSError, UnicodeDecodeError, ValueError, subprocess.CalledProcessError) as e:
        sys.stderr.write("ptx_entries.py: %s\n" % e)
        return 2
    counts = {"same": 0, "same-body": 0, "DIFFERS": 0, "only-old": 0, "only-new": 0}
    for key in sorted(set(ko) | set(kn)):
        a, b = ko.get(key), kn.get(key)
        if a is None or b is None:
            # unpaired: absent from one file, or two kernels of one file share the name
            verdict = "only-new" if key not in ko else "only-old"
            twice = (key in ko and a is None) or (key in kn and b is None)
            print("%-9s %s%s" % (verdict, key, " (two kernels of a file share this name)" if twice else ""))
            counts[verdict] += 1
            continue
        pa, ba = old[a]
        pb, bb = new[b]
        ra, rb = renumber(ba, a), renumber(bb, b)
        if ra != rb:
            la, lb = ra.splitlines(), rb.splitlines()
            i = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
            first = "%s | %s" % (la[i].strip() if i < len(la) else "(end)", lb[i].strip() if i < len(lb) else "(end)")
            print("DIFFERS   %s -- line %d: %s" % (key, i + 1, first))
            counts["DIFFERS"] += 1
        elif pa.replace(a, "K") != pb.replace(b, "K"):
            print("same-body %s (parameters: %d -> %d declared)" % (key, pa.count(".param"), pb.count(".param")))
            counts["same-body"] += 1
        else:
            print("same      %s" % key)
            counts["same"] += 1
    print(", ".join("%d %s" % (v, k) for k, v in counts.items()))
    return 1 if counts["DIFFERS"] or counts["only-old"] or counts["only-new"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
