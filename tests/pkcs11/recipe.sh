# shellcheck shell=bash
# The recipes of docs/PKCS11.md, run as written.  A recipe is a fenced
# block whose first line names it:
#
#   ```sh
#   # recipe: gnutls-serv
#   : "${MODULE:=/usr/lib/x86_64-linux-gnu/pkcs11/libwks-pkcs11.so}"
#   ...
#   ```
#
# A recipe takes what differs between a reader's machine and a test (the
# module's path, the configuration file, ports) from variables with the
# installed defaults written out as above, so the text a reader copies is
# the text a test runs.  Sourced by the scripts in tests/pkcs11/:
#
#   . tests/pkcs11/recipe.sh
#   recipe_text NAME            # the block's text, on stdout
#   run_recipe NAME [ARGS...]   # runs it with bash -eu in the current folder
#
# Both fail (status 2, with a message) when docs/PKCS11.md has no such
# recipe, or more than one.
RECIPE_DOC=${RECIPE_DOC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/docs/PKCS11.md}

recipe_text() {
	local n
	n=$(grep -c "^# recipe: $1\$" "$RECIPE_DOC" || true)
	if [ "$n" != 1 ]; then
		echo "recipe.sh: $RECIPE_DOC has $n recipes named '$1'" >&2
		return 2
	fi
	awk -v name="$1" '
		/^```/ { if (inb) { if (take) exit; inb = 0; next }
		         inb = 1; first = 1; next }
		inb && first { first = 0; if ($0 == "# recipe: " name) take = 1 }
		take { print }
	' "$RECIPE_DOC"
}

run_recipe() {
	local name=$1 text
	shift
	text=$(recipe_text "$name") || return 2
	bash -eu -c "$text" "recipe-$name" "$@"
}
