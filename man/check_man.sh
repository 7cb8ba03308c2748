#!/usr/bin/env bash
# Every option that `--help` shows, of roceconf and each of its subcommands (recursively) and of
# roceconf-agent, is in the matching man page. Usage: check_man.sh BUILD_DIR MAN_DIR
set -euo pipefail
build=$1 man=$2
missing=0
# The long and short option names of one --help text's option lines.
options() { grep -E '^\s+-' | grep -oE '(^|[ ,])--?[A-Za-z0-9][A-Za-z0-9-]*' | tr -d ' ,' | sort -u; }
subcommands() { sed -n '/^Subcommands:/,$p' | grep -E '^  [a-z]' | awk '{print $1}'; }
check() {  # PAGE COMMAND...
  local page=$1
  shift
  local help o
  help=$("$@" --help)
  # roff writes '-' as '\-'.
  for o in $(options <<<"$help"); do
    grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" "$page" || {
      echo "$page: '$*' option $o is not in the page"
      missing=1
    }
  done
  local s
  for s in $(subcommands <<<"$help"); do
    grep -qF ".SS \"$(sed 's/-/\\-/g' <<<"${*#"$build"/} $s")\"" "$page" || {
      echo "$page: '$* $s' has no section"
      missing=1
    }
    check "$page" "$@" "$s"
  done
}
check "$man/roceconf.1" "$build/roceconf"
[[ -x $build/roceconf-agent ]] && check "$man/roceconf-agent.8" "$build/roceconf-agent"
exit $missing
