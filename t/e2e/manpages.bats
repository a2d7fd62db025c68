#!/usr/bin/env bats
# manpages.bats: every man page is clean for mandoc, each command's manual documents exactly the options the command accepts, and no page calls missing what the programs have.

PAGES="qsub.1 qstat.1 qdel.1 qhold.1 qrls.1 qhost.1 qacct.1 qmod.1 reserve.1 unreserve.1 nowq.1 qconf.1 qalter.1 qwait.1 qrsh.1 qselect.1 drmaa.3 qmaster.8 execd.8 qmaster.conf.5 execd.ini.5 nowq.7"

# The options a page marks up with Fl, one per line ("-cwd", "--json"),
# from the whole page or, given a section name, from that section only,
# and given a third argument, only from the heads of list items (.It).
# Fl's argument is the option without its first dash; a following macro
# (two or three letters, capitalised) or punctuation is not an option.
page_flags() {
	awk -v want="${2:-}" -v items="${3:-}" '
		/^\.Sh / { sec = $0; sub(/^\.Sh +/, "", sec) }
		want != "" && sec != want { next }
		items != "" && !/^\.It / { next }
		/^\./ {
			for (i = 1; i < NF; i++) {
				if ($i != "Fl" && $i != ".Fl")
					continue
				a = $(i + 1)
				if (a ~ /^[A-Z][a-z][a-z]?$/ || a !~ /^-?[A-Za-z@]/)
					continue
				print "-" a
			}
		}' "$1" | sort -u
}

# The usage text of a command: --help, or Grid Engine's -help.
help_text() {
	"$1" --help 2>/dev/null || "$1" -help 2>/dev/null
}

# The options named in a usage text: a word that begins with one or two
# dashes and a letter, after a blank, a bracket, "(" or "|".
help_flags() {
	grep -oE '(^|[][[:space:]|(])--?[A-Za-z][A-Za-z0-9_-]*' | sed 's/^[^-]*//' | sort -u
}

@test "every manual page exists" {
	for p in $PAGES; do
		[ -f "$top_srcdir/doc/$p" ] || { echo "missing: doc/$p"; return 1; }
	done
}

@test "mandoc -T lint -W warning finds nothing in any page" {
	command -v mandoc >/dev/null || { echo "mandoc is not installed (apt-get install mandoc)"; return 1; }
	bad=0
	for p in $PAGES; do
		out=$(mandoc -T lint -W warning "$top_srcdir/doc/$p" 2>&1 || true)
		if [ -n "$out" ]; then
			echo "$out"
			bad=1
		fi
	done
	[ "$bad" -eq 0 ]
}

@test "no quotation in a page opens inside another" {
	# ".Ql a , Ql b" quotes "a, 'b'" as one: Ql takes the rest of its line.
	local p bad=0 out
	for p in $PAGES; do
		out=$(mandoc -T ascii "$top_srcdir/doc/$p" | sed 's/.\x08//g' | tr '\n' ' ' |
		    grep -o "\`[^']*\`[^']*'" || true)
		[ -z "$out" ] || { printf '%s: %s\n' "$p" "$out"; bad=1; }
	done
	[ "$bad" -eq 0 ]
}

@test "nowq(7) refers to every other page in SEE ALSO" {
	for p in $PAGES; do
		[ "$p" = nowq.7 ] && continue
		name=${p%.*} sec=${p##*.}
		grep -qx "\.Xr $name $sec \{0,1\},\{0,1\}" "$top_srcdir/doc/nowq.7" ||
			{ echo "nowq.7 lacks .Xr $name $sec"; return 1; }
	done
}

# Both directions for one command: what --help lists is in the manual,
# and what the manual's OPTIONS section (or the items of the section given:
# a daemon's DESCRIPTION) lists, the command accepts.
check_options() {
	local cmd=$1 bin="$top_builddir/bin/$1" page="$top_srcdir/doc/$1.${2:-1}" sec=${3:-OPTIONS} items=
	local help in_help in_page in_options missing=0 o

	[ -x "$bin" ] || skip "$bin is not built"
	help=$(help_text "$bin") || { echo "$cmd: neither --help nor -help works"; return 1; }
	in_help=$(printf '%s\n' "$help" | help_flags)
	in_page=$(page_flags "$page")
	# Outside OPTIONS, other commands' options are named in the text.
	[ "$sec" = OPTIONS ] || items=1
	in_options=$(page_flags "$page" "$sec" $items)
	[ -n "$in_help" ] || { echo "$cmd --help names no option"; return 1; }
	[ -n "$in_options" ] || { echo "${page##*/} has no Fl in its $sec section"; return 1; }
	for o in $in_help; do
		if ! printf '%s\n' "$in_page" | grep -qxF -- "$o"; then
			echo "$cmd accepts $o, but ${page##*/} has no .Fl for it"
			missing=1
		fi
	done
	for o in $in_options; do
		printf '%s\n' "$in_help" | grep -qxF -- "$o" && continue
		# The usage text need not list the option that prints it.
		if [ "$o" = --help ] || [ "$o" = -help ] || [ "$o" = -h ]; then
			"$bin" "$o" >/dev/null 2>&1 && continue
		fi
		echo "${page##*/} documents $o in $sec, but $cmd --help does not list it"
		missing=1
	done
	[ "$missing" -eq 0 ]
}

@test "qsub(1) documents every option of qsub, and only those" {
	check_options qsub
}

@test "qstat(1) documents every option of qstat, and only those" {
	check_options qstat
}

@test "qdel(1) documents every option of qdel, and only those" {
	check_options qdel
}

@test "qhold(1) documents every option of qhold, and only those" {
	check_options qhold
}

@test "qrls(1) documents every option of qrls, and only those" {
	check_options qrls
}

@test "qhost(1) documents every option of qhost, and only those" {
	check_options qhost
}

@test "qacct(1) documents every option of qacct, and only those" {
	check_options qacct
}

@test "qmod(1) documents every option of qmod, and only those" {
	check_options qmod
}

@test "nowq(1) documents every option of nowq, and only those" {
	check_options nowq
}

@test "qconf(1) documents every option of qconf, and only those" {
	check_options qconf
}

@test "qselect(1) documents every option of qselect, and only those" {
	check_options qselect
}

@test "qalter(1) documents every option of qalter, and only those" {
	check_options qalter
}

@test "reserve(1) documents every option of reserve, and only those" {
	check_options reserve
}

@test "unreserve(1) documents every option of unreserve, and only those" {
	check_options unreserve
}

@test "qwait(1) documents every option of qwait, and only those" {
	check_options qwait
}

@test "qrsh(1) documents every option of qrsh, and only those" {
	check_options qrsh
}

@test "qmaster(8) documents every option of qmaster, and only those" {
	check_options qmaster 8 DESCRIPTION
}

@test "execd(8) documents every option of execd, and only those" {
	check_options execd 8 DESCRIPTION
}

# The pages and documents a new admin reads.
DOCS="doc/*.1 doc/*.3 doc/*.5 doc/*.7 doc/*.8 doc/*.md README.md"

@test "qmaster.conf(5) and execd.ini(5) list exactly the settings the daemons accept" {
	run python3 "$top_srcdir/t/e2e/docclaims.py" settings "$top_srcdir" "$top_builddir/bin"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "no page calls missing a command, an option, a setting or a feature the programs have" {
	local files
	files=$(cd "$top_srcdir" && echo $DOCS)
	run python3 "$top_srcdir/t/e2e/docclaims.py" absent "$top_srcdir" "$top_builddir/bin" \
	    $(for f in $files; do echo "$top_srcdir/$f"; done)
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "every option a page names for a nowq command, as in 'qstat -j', is one the command lists" {
	local files
	files=$(cd "$top_srcdir" && echo $DOCS)
	run python3 "$top_srcdir/t/e2e/docclaims.py" named "$top_srcdir" "$top_builddir/bin" \
	    $(for f in $files; do echo "$top_srcdir/$f"; done)
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "nowq --help and nowq(1) name every command the client program is installed as" {
	local names n help
	help=$("$top_builddir/bin/nowq" --help)
	# Called by a name it does not know, the program lists those it does.
	ln -sf "$top_builddir/bin/nowq" "$BATS_TEST_TMPDIR/not-a-command"
	run "$BATS_TEST_TMPDIR/not-a-command"
	[ "$status" -eq 1 ]
	names=$(printf '%s\n' "$output" | sed -n 's/.*known: *//p')
	[ -n "$names" ]
	for n in $names; do
		[ "$n" = nowq ] && continue
		[ -x "$top_builddir/bin/$n" ] || { echo "bin/$n is not installed"; return 1; }
		printf '%s\n' "$help" | grep -qw -- "$n" || { echo "nowq --help does not name $n"; return 1; }
		grep -qx "\.Nm $n *,\{0,1\}" "$top_srcdir/doc/nowq.1" || { echo "nowq.1 does not name $n (.Nm $n)"; return 1; }
		case " $PAGES " in *" $n.1 "*) ;; *) echo "no manual page $n.1 in PAGES"; return 1 ;; esac
	done
}

@test "the daemons and each nowq subcommand answer --help with their usage on stdout and success" {
	local c out
	for c in qmaster execd "nowq start" "nowq stop" "nowq env" "nowq status"; do
		out=$("$top_builddir"/bin/$c --help 2>/dev/null) || { echo "$c --help failed"; return 1; }
		[[ $out == usage:* ]] || { echo "$c --help printed: $out"; return 1; }
	done
	# A wrong option is still an error, on stderr.
	run "$top_builddir/bin/execd" --no-such-option
	[ "$status" -eq 2 ]
	run "$top_builddir/bin/nowq" start --no-such-option
	[ "$status" -eq 1 ]
}
