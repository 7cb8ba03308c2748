#!/bin/sh
# Fails unless lab/rxe/expected-verdicts.txt names every case of the built catalogue, and only
# those: `lab.sh check` compares with --strict, where a case missing from the file counts as new.
# usage: check_expected_names.sh ROCECONF EXPECTED_VERDICTS
set -eu
roceconf=$1
expected=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$roceconf" run --list | awk '$1 ~ /\// { print $1 }' | sort >"$tmp/catalogue"
sed 's/#.*//' "$expected" | awk 'NF { print $1 }' | sort >"$tmp/expected"
status=0
missing=$(comm -23 "$tmp/catalogue" "$tmp/expected")
extra=$(comm -13 "$tmp/catalogue" "$tmp/expected")
dups=$(uniq -d "$tmp/expected")
if [ -n "$missing" ]; then
  echo "$expected lacks these catalogue cases (add each with its rxe verdict, or skip):" >&2
  echo "$missing" >&2
  status=1
fi
if [ -n "$extra" ]; then
  echo "$expected names cases the catalogue does not have:" >&2
  echo "$extra" >&2
  status=1
fi
if [ -n "$dups" ]; then
  echo "$expected names these cases twice:" >&2
  echo "$dups" >&2
  status=1
fi
[ "$status" -ne 0 ] || echo "$(wc -l <"$tmp/catalogue") cases, each named once in $expected"
exit $status
