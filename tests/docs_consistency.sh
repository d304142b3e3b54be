#!/bin/sh
# The README, the man pages and `rlthrottle --help` say the same things (make docs-check, part of
# make test): every RLT_* variable, every rule key, every launcher option and every subcommand
# option that one of them (or the code) has, each of the others has too; none names a variable,
# key or option the code does not know; and the man pages format without a groff warning.
#   variables: the string literals "RLT_..." of src/ and tools/launcher/
#   rule keys: the parser's key_names table (src/rule_parse.c); RLT_NET's kinds and keys
#              (src/net_parse.c's kind_names and key_names)
#   options:   the launcher's struct option table (tools/launcher/main.c), and each subcommand's
#              --help (its options must be in rlthrottle(1))
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
R=$BUILD/rlthrottle
[ -x "$R" ] || { echo "docs: $R not built"; exit 2; }
command -v groff >/dev/null || { echo "docs: groff is not installed (.ci/packages)"; exit 2; }
W=$(mktemp -d) || exit 2
trap 'rm -rf "$W"' EXIT

bad=0
for p in man/rlthrottle.1 man/rlthrottle.7; do
	LC_ALL=C.UTF-8 groff -ww -z -man -k "$p" >"$W/groff.err" 2>&1
	if [ -s "$W/groff.err" ]; then
		echo "docs: groff warns on $p:"; sed 's/^/  /' "$W/groff.err"; bad=1
	fi
	if command -v man >/dev/null; then
		LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$p" 2>"$W/man.err" >/dev/null
		if [ -s "$W/man.err" ]; then
			echo "docs: man --warnings on $p:"; sed 's/^/  /' "$W/man.err"; bad=1
		fi
	fi
	LC_ALL=C.UTF-8 groff -man -Tutf8 -P-cbou -rHY=0 -rLL=100n "$p" 2>/dev/null >"$W/$(basename "$p").txt"
done
"$R" --help >"$W/help.txt" || bad=1
for c in top stats set shm; do "$R" help "$c" >"$W/help-$c.txt" || bad=1; done

python3 - "$W" <<'PY' || bad=1
import re, sys, glob
W = sys.argv[1]
def read(p): return open(p, encoding="utf-8").read()
readme, man1, man7, helptxt = read("README.md"), read(W + "/rlthrottle.1.txt"), read(W + "/rlthrottle.7.txt"), read(W + "/help.txt")
code = "".join(read(p) for p in sorted(glob.glob("src/*.c") + glob.glob("tools/launcher/*.c")))
docs = {"README.md": readme, "rlthrottle(1)": man1, "rlthrottle(7)": man7, "rlthrottle --help": helptxt}
bad = []

# variables
code_vars = set(re.findall(r'"(RLT_[A-Z]+(?:_[A-Z]+)*)"', code))
found = {n: set(re.findall(r"\bRLT_[A-Z]+(?:_[A-Z]+)*\b", t)) for n, t in docs.items()}
allv = code_vars.union(*found.values())
for n, s in found.items():
    for v in sorted(allv - s): bad.append("%s does not mention the variable %s" % (n, v))
    for v in sorted(s - code_vars): bad.append("%s names %s, which the code does not read" % (n, v))

# rule keys (and the values of action, algo, scope)
m = re.search(r"key_names\[K_COUNT\] = \{(.*?)\};", read("src/rule_parse.c"), re.S)
keys = set(re.findall(r'"([a-z-]+)"', m.group(1)))
values = ["token", "leaky", "fixed-window", "sliding-window", "sliding-log", "delay", "reject",
          "dry-run", "process", "connection", "shared:", "redis://"]
for n, t in (("README.md", readme), ("rlthrottle(7)", man7)):
    for k in sorted(keys):
        if not re.search(r"(?<![\w-])%s(=|`)" % re.escape(k), t):
            bad.append("%s does not describe the rule key %s=" % (n, k))
    for v in values:
        if v not in t: bad.append("%s does not mention %s" % (n, v))
# RLT_NET's kinds and keys (src/net_parse.c): each described in the README and rlthrottle(7)
net_src = read("src/net_parse.c")
net_kinds = set(re.findall(r'"([a-z-]+)"', re.search(r"kind_names\[RLT_NET_KIND_COUNT\] = \{(.*?)\};", net_src, re.S).group(1)))
net_keys = set(re.findall(r'"([a-z-]+)"', re.search(r"key_names\[K_COUNT\] = \{(.*?)\};", net_src, re.S).group(1)))
for n, t in (("README.md", readme), ("rlthrottle(7)", man7)):
    for k in sorted(net_kinds | net_keys):
        if not re.search(r"(?<![\w-])%s(=|!=|`| \[)" % re.escape(k), t):
            bad.append("%s does not describe RLT_NET's %s" % (n, k))
man7_keys = set(re.findall(r"^ {7}([a-z-]+)=", man7, re.M))
for k in sorted(man7_keys - keys - net_kinds - net_keys): bad.append("rlthrottle(7) describes a key %s= the parser does not know" % k)

# launcher options: the code's table against --help, rlthrottle(1)'s OPTIONS and the README's table
main_c = read("tools/launcher/main.c")
table = re.search(r"struct option opts\[\] = \{(.*?)\{NULL", main_c, re.S).group(1)
code_opts = {"--" + o for o in re.findall(r'\{"([a-z-]+)"', table)}
help_opts = set(re.findall(r"^ +(?:-\w, )?(--[a-z][a-z-]*)", helptxt, re.M))
sec = re.search(r"^OPTIONS\n(.*?)^[A-Z][A-Z ]+\n", man1, re.S | re.M)
man_opts = set(re.findall(r"^ {7}(?:-\w, )?(--[a-z][a-z-]*)", sec.group(1) if sec else "", re.M))
rows = [l for l in readme.splitlines() if re.match(r"\| *`-", l)]
readme_opts = set(re.findall(r"`(?:-\w, )?(--[a-z][a-z-]*)", "\n".join(rows)))
for n, s in (("rlthrottle --help", help_opts), ("rlthrottle(1) OPTIONS", man_opts), ("README.md's option table", readme_opts)):
    for o in sorted(code_opts - s): bad.append("%s lacks the option %s" % (n, o))
    for o in sorted(s - code_opts): bad.append("%s has an option %s the launcher does not take" % (n, o))

# each subcommand's options (from its --help) in rlthrottle(1)
for c in ("top", "stats", "set", "shm"):
    for o in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z]\b)", read(W + "/help-%s.txt" % c)))):
        if o not in man1: bad.append("rlthrottle(1) does not mention %s's option %s" % (c, o))
    if "rlthrottle " + c not in readme and "rlthrottle %s" % c not in readme:
        bad.append("README.md does not mention rlthrottle %s" % c)

for b in bad: print("docs: " + b)
print("docs: %d variables, %d rule keys, %d launcher options checked in README.md, rlthrottle(1), rlthrottle(7), --help%s"
      % (len(allv), len(keys), len(code_opts), "" if not bad else ": %d problems" % len(bad)))
sys.exit(1 if bad else 0)
PY
exit "$bad"
