#!/usr/bin/env bats
# tree.bats: the source tree itself: no merge-conflict markers, and each folder includes only the headers of the folders below it.

@test "no tracked file holds merge-conflict markers" {
	git -C "$top_srcdir" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
		skip "not a git checkout (a release tarball)"
	# The markers are seven of one character at the start of a line; a
	# line of "=" alone is also a Markdown heading's underline, so only
	# the two ends (and diff3's middle) count.
	run git -C "$top_srcdir" grep -nIE '^(<{7}|>{7}|[|]{7})( |$)'
	echo "$output"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
}

# common <- spool <- qmaster; common <- execd; common <- client <- drmaa: a
# folder includes its own headers and those of the folders it may depend
# on, so the two daemons share code only through common/.
@test "each folder includes only headers of the folders it may depend on" {
	local bad=
	bad=$(cd "$top_srcdir" && awk '
		FNR == 1 {
			dir = FILENAME; sub(/\/.*/, "", dir)
			ok = " common " dir " "
			if (dir == "qmaster")
				ok = " common spool qmaster "
			if (dir == "drmaa")
				ok = " common client drmaa "
		}
		/^[ \t]*#[ \t]*include[ \t]*"/ {
			inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
			if (inc !~ /\//)
				next
			top = inc; sub(/\/.*/, "", top)
			if (index(ok, " " top " ") == 0)
				printf "%s:%d: %s may not include %s\n", FILENAME, FNR, dir, inc
		}' common/*.[ch] spool/*.[ch] qmaster/*.[ch] execd/*.[ch] client/*.[ch] drmaa/*.[ch])
	echo "$bad"
	[ -z "$bad" ]
}

# The limits of doc/architecture.md: a file a reader can hold in mind.
@test "no source file is over 1,200 lines" {
	local bad=
	bad=$(cd "$top_srcdir" && wc -l common/*.[ch] spool/*.[ch] qmaster/*.[ch] execd/*.[ch] \
	    client/*.[ch] | awk '$2 != "total" && $1 > 1200 { printf "%s: %d lines\n", $2, $1 }')
	echo "$bad"
	[ -z "$bad" ]
}

# A function is a top-level block: from a line opening with "{" to the
# next line closing with "}" in the first column, as the style writes them.
@test "no function is over 150 lines" {
	local bad=
	bad=$(cd "$top_srcdir" && awk '
		FNR == 1 { start = 0 }
		/^\{/ { start = FNR; name = prev }
		/^\}/ && start {
			if (FNR - start - 1 > 150)
				printf "%s:%d: %s is %d lines\n", FILENAME, start, name, FNR - start - 1
			start = 0
		}
		{ if ($0 ~ /^[A-Za-z_]/) prev = $0 }' \
	    common/*.c spool/*.c qmaster/*.c execd/*.c client/*.c)
	echo "$bad"
	[ -z "$bad" ]
}
