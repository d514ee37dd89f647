#!/usr/bin/env bash
# Today's Python tests of issue 52 against the Python module of an older commit
# (default 21af68a, where the issue was filed) and against today's, side by
# side in one run: which cases fail on the old module and pass on today's,
# which pass on both, which call an API the old module did not have
# (scripts/old_module_compare.py prints the counts; docs/library.md records a run).
#
#   scripts/old_module_check.sh [COMMIT]
#
# The old source is `git archive COMMIT` in $OLD_DIR (default
# /tmp/mhalearn-old-COMMIT; nothing is registered in this repository), configured
# with its own release preset in $OLD_DIR/build/release; only the module
# (mhalearn_python) is built there. Today's module and CLI (the CLI makes
# test_options.py's fixture) are this tree's build/release. Builds take
# /tmp/mhalearn-build.lock and run under nice. JUnit files and logs: $OUT
# (default /tmp/mhalearn-old-module-check).
set -euo pipefail
cd "$(dirname "$0")/.."
commit=${1:-21af68a}
old=${OLD_DIR:-/tmp/mhalearn-old-$commit}
out=${OUT:-/tmp/mhalearn-old-module-check}
python=${MHALEARN_PYTHON_EXECUTABLE:-/usr/bin/python3}
build() { flock /tmp/mhalearn-build.lock nice -n 5 cmake --build --preset release -j 2 --target "$@"; }

# The tests written or changed for issue 52 (git diff 21af68a -- python/tests).
tests=(
  python/tests/test_bad_inputs.py
  python/tests/test_interrupts.py
  python/tests/test_basics.py::test_bad_input_raises_value_error_with_one_line
  python/tests/test_basics.py::test_a_wrong_argument_is_a_type_error_naming_it
  python/tests/test_basics.py::test_paths_may_be_pathlike
  python/tests/test_basics.py::test_bad_instance_file_gives_the_cli_message
  python/tests/test_options.py::test_every_cli_option_is_a_keyword
  python/tests/test_options.py::test_unknown_keyword_is_refused
  python/tests/test_options.py::test_help_lists_every_option_with_its_default
  python/tests/test_demo.py::test_demo_takes_the_paper_learner_s_options
  python/tests/test_demo.py::test_options_demo_does_not_take_are_refused
  python/tests/test_stage_commands.py::test_sculpt_options_refused_as_in_the_cli
  python/tests/test_stage_commands.py::test_hard_refuses_as_the_cli
)

echo "== the module of $commit in $old"
if [ ! -f "$old/CMakeLists.txt" ]; then
  mkdir -p "$old"
  git archive "$commit" | tar -x -C "$old"
fi
(cd "$old" && cmake --preset release >/dev/null && build mhalearn_python)

echo "== today's module and CLI ($(git rev-parse --short HEAD))"
cmake --preset release >/dev/null
build mhalearn_python mhalearn

mkdir -p "$out"
for column in old today; do
  if [ "$column" = old ]; then module="$old/build/release/python"; else module="$PWD/build/release/python"; fi
  echo "== pytest against the $column module ($module); load $(cut -d' ' -f1-3 /proc/loadavg)"
  # MHALEARN_BUILD_DIR: the CLI of test_options.py's fixture is today's in both columns.
  PYTHONPATH="$module" MHALEARN_BUILD_DIR="$PWD/build/release" \
    "$python" -m pytest -q -p no:cacheprovider --junitxml="$out/$column.xml" "${tests[@]}" >"$out/$column.log" 2>&1 || true
  tail -1 "$out/$column.log"
done
echo "== side by side"
"$python" scripts/old_module_compare.py "$out/old.xml" "$out/today.xml"
