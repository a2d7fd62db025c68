#!/bin/sh
# setup.sh: installs what nowq needs (Debian packages, as root or with sudo) and builds it with autotools.
# Usage: ./setup.sh [configure options...]   (the build goes to ./_build, or to $NOWQ_BUILD_DIR)
set -eu
cd "$(dirname "$0")"

PKGS="build-essential autoconf automake libtool pkg-config libsqlite3-dev libconfuse-dev
libinih-dev libevent-dev libjansson-dev libmunge-dev munge libcmocka-dev bats mandoc
iproute2 procps python3 spin sqlite3 libxml2-utils"

# The fuzz targets need clang (libFuzzer); only a fuzzing build asks for it.
case " $* " in *" --enable-fuzzing "*) PKGS="$PKGS clang" ;; esac

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "setup: installing:$missing"
	if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

[ -x configure ] && [ configure -nt configure.ac ] && [ Makefile.in -nt Makefile.am ] || autoreconf -fi >/dev/null
top=$(pwd)
# configure refuses a folder whose path has a space or another character a
# shell would take apart; such a clone is built through a symbolic link of
# a plain name in the user's own ~/.cache (not /tmp, where another user
# could have put something by that name first).
case $top in
*[!A-Za-z0-9_./+,:@%=-]*)
	cache=${XDG_CACHE_HOME:-${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}/.cache}/nowq
	mkdir -p "$cache"
	link=$cache/src-$(printf '%s' "$top" | cksum | cut -d' ' -f1)
	ln -sfn "$top" "$link"
	case $link in *[!A-Za-z0-9_./+,:@%=-]*)
		echo "setup: cannot build from $top: configure refuses the space in its path, and so in $link" >&2
		exit 1 ;;
	esac
	cd "$link"
	top=$link
	;;
esac
# test.sh builds a second, fuzzing tree beside the first.
build=${NOWQ_BUILD_DIR:-_build}
mkdir -p "$build"
cd "$build"
want="$*"
if [ ! -f Makefile ] || [ "$(cat .configured-with 2>/dev/null)" != "$want" ]; then
	"$top/configure" -q "$@"
	echo "$want" > .configured-with
fi
make -j"$(nproc)" >/dev/null
echo "setup: built nowq in $(pwd)"
