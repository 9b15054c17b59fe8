# lib.sh: what build.sh and the scripts that change a copy of the
# simulator share. Source it; it defines functions only.

# find_python2: sets the array py to a command that runs a Python 2 (the
# simulator's waf needs one), looked for in $PYTHON, python2.7, python2,
# python and pyenv's 2.x versions; returns 1 when there is none.
find_python2() {
  is2() { "$@" -c 'import sys; sys.exit(sys.version_info[0] != 2)' >/dev/null 2>&1; }
  py=()
  local c v
  for c in ${PYTHON:-} python2.7 python2 python; do
    if command -v "$c" >/dev/null && is2 "$c"; then
      py=("$c")
      return 0
    fi
  done
  if command -v pyenv >/dev/null; then
    v=$(pyenv versions --bare 2>/dev/null | grep -E '^2\.[0-9]+' | tail -1 || true)
    if [[ -n $v ]] && is2 env PYENV_VERSION="$v" python; then
      py=(env PYENV_VERSION="$v" python)
      return 0
    fi
  fi
  return 1
}

# copy_checkout NAME SRC NEW: copies the built checkout SRC to the new
# directory NEW and points waf's lock file and cache at the copy; sets
# new to the copy and sim to its simulation/ tree. NAME names the calling script in
# its errors.
copy_checkout() {
  local name=$1 src
  if [[ -e $3 ]]; then
    echo "$name: $3 exists: give a new directory" >&2
    exit 2
  fi
  src=$(cd "$2" && pwd)
  if [[ ! -x $src/simulation/build/scratch/third ]]; then
    echo "$name: $src is not built: run $(dirname "${BASH_SOURCE[0]}")/build.sh $2" >&2
    exit 2
  fi
  cp -a "$src" "$3"
  new=$(cd "$3" && pwd)
  sim=$new/simulation
  # waf keeps the checkout's path in its lock file and cache: the copy's.
  sed -i "s#$src/#$new/#g" "$sim"/.lock-waf* "$sim"/build/c4che/*.py
}

# rebuild NAME: rebuilds the copy copy_checkout made (seconds: the files
# changed and what links them).
rebuild() {
  if ! find_python2; then
    echo "$1: no Python 2 for waf (set PYTHON)" >&2
    exit 1
  fi
  if ! (cd "$sim" && "${py[@]}" ./waf build >"$new/rebuild.log" 2>&1); then
    echo "$1: the rebuild failed; waf's output: $new/rebuild.log (remove $new to try again)" >&2
    exit 1
  fi
}
