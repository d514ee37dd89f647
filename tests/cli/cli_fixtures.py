"""What the command-line tests of this folder share: drawing fixture instances
and reporting failures (bad_inputs.py, exit_codes.py, signals.py, progress_lines.py)."""
import json
import os
import subprocess


def generate(tool, folder, out, d=8, seed=1, inputs="boolean"):
    """`mhalearn generate --d d --k 2 --m 2 --seed seed --inputs inputs -o out` in folder."""
    subprocess.run([tool, "generate", "--d", str(d), "--k", "2", "--m", "2", "--seed", str(seed), "--inputs", inputs,
                    "-o", out], cwd=folder, check=True, capture_output=True)


def overflowing_instance(folder, source, out):
    """source with every Θ_i × 1e307: logits past 1.8e308, which the fast path cannot answer (exit 3)."""
    with open(os.path.join(folder, source)) as f:
        inst = json.load(f)
    for head in inst["heads"]:
        head["theta"] = [[v * 1e307 for v in row] for row in head["theta"]]
    with open(os.path.join(folder, out), "w") as f:
        json.dump(inst, f)


def report(failures, summary):
    """Prints each failure and the summary line; the exit status (1 when any failed)."""
    for f in failures:
        print("FAIL", f)
    print(summary)
    return 1 if failures else 0
