#!/usr/bin/env bash
# Regenerates the seed corpora fuzz/corpus/<harness>/: small valid files made
# by the tool (generate, hard, sample, learn --checkpoint) and by numpy (np.save, every
# dtype and format version the reader takes, plus near misses it rejects).
# Needs build/release/mhalearn (or $MHALEARN) and python3-numpy ($PYTHON,
# default /usr/bin/python3, the Debian interpreter that has it).
#   fuzz/make_corpus.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${MHALEARN:-build/release/mhalearn}
out=fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$out"
mkdir -p "$out"/{npy,instance_json,import,forward_x,checkpoint}

# Instances made by the tool (d = 4 and 8 match fuzz_forward_x's instances).
"$tool" generate --d 4 --k 2 --m 1 --seed 1 -o "$out/instance_json/generate_d4_m1.json" >/dev/null
"$tool" generate --d 4 --k 2 --m 2 --inputs gaussian --seed 2 -o "$out/instance_json/generate_d4_gaussian.json" >/dev/null
"$tool" hard --d 3 --m 2 --threads 1 -o "$out/instance_json/hard_d3_m2.json" >/dev/null

# Datasets made by the tool: Boolean int8 and Gaussian float64 inputs, labels.
"$tool" generate --d 8 --k 2 --m 2 --seed 3 -o "$tmp/b.json" >/dev/null
"$tool" sample "$tmp/b.json" --n 2 --threads 1 --x "$tmp/Xb.npy" --y "$tmp/Yb.npy" >/dev/null
"$tool" generate --d 4 --k 2 --m 1 --inputs gaussian --seed 4 -o "$tmp/g.json" >/dev/null
"$tool" sample "$tmp/g.json" --n 2 --threads 1 --x "$tmp/Xg.npy" --y "$tmp/Yg.npy" >/dev/null
cp "$tmp/Xb.npy" "$out/npy/tool_x_int8.npy"
cp "$tmp/Yb.npy" "$out/npy/tool_y_float64.npy"
cp "$tmp/Xg.npy" "$out/npy/tool_x_float64.npy"

# fuzz_forward_x: one byte choosing the instance, then the inputs file.
printf '\001' | cat - "$tmp/Xb.npy" >"$out/forward_x/tool_int8_d8"
printf '\000' | cat - "$tmp/Xg.npy" >"$out/forward_x/tool_float64_d4"
printf '\002' | cat - "$tmp/Xg.npy" >"$out/forward_x/tool_float64_d4_huge_weights"

# fuzz_checkpoint: the checkpoints learn writes at each safe point of a small
# run ((6,2,2): one round, stage 3 then finds too few events), and one under
# the hull oracle (a round without a body), packed as check_checkpoint reads
# them (fuzz/checks.hpp).
"$tool" generate --d 6 --k 2 --m 2 --scale 3 --seed 1 -o "$tmp/c.json" >/dev/null
budgets=(--stage1-samples 5000 --crude-sculpt-samples 20000 --sculpt-samples 20000 --final-sculpt-samples 20000 --constraints 12
         --margin-samples 200000 --net-tuples 50 --rounds 2 --test-samples 100 --threads 1)
for n in 1 2 3 4 5 6 7; do
  MHALEARN_STOP_AT_SAFE_POINT=$n "$tool" learn "$tmp/c.json" "${budgets[@]}" --checkpoint "$tmp/ck$n" \
    >/dev/null 2>&1 || [ $? -eq 5 ]
done
MHALEARN_STOP_AT_SAFE_POINT=2 "$tool" learn "$tmp/c.json" "${budgets[@]}" --oracle hull --checkpoint "$tmp/ckh" \
  >/dev/null 2>&1 || [ $? -eq 5 ]
"${PYTHON:-/usr/bin/python3}" - "$tmp" "$out/checkpoint" <<'PY'
import json, os, struct, sys
tmp, out = sys.argv[1:]

def pack(folder, verify):
    with open(os.path.join(folder, "checkpoint.json"), "rb") as f:
        manifest = f.read()
    blob = bytes([verify]) + struct.pack("<I", len(manifest)) + manifest
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".npy")):
        with open(os.path.join(folder, name), "rb") as f:
            data = f.read()
        blob += bytes([len(name)]) + name.encode() + struct.pack("<I", len(data)) + data
    return blob

for folder in sorted(n for n in os.listdir(tmp) if n.startswith("ck")):
    with open(os.path.join(tmp, folder, "checkpoint.json")) as f:
        state = json.load(f)["state"]
    name = f"tool_{folder}_{state['next']}_round{state['round']}"
    for verify in (1, 0) if folder in ("ck2", "ck6") else (1,):
        with open(os.path.join(out, name + ("" if verify else "_unchecked_names")), "wb") as f:
            f.write(pack(os.path.join(tmp, folder), verify))
PY

"${PYTHON:-/usr/bin/python3}" - "$out" <<'PY'
import io, struct, sys
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)

def npy(a, version=None, fortran=False):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, np.asfortranarray(a) if fortran else a)
    else:
        np.lib.format.write_array(buf, a, version=version)
    return buf.getvalue()

def put(path, data):
    with open(f"{out}/{path}", "wb") as f:
        f.write(data)

g = rng.standard_normal((2, 2, 4))
b = np.where(rng.random((2, 2, 8)) < 0.5, -1, 1).astype(np.int8)
seeds = {
    "np_f8_3d.npy": npy(g),
    "np_f4_3d.npy": npy(g.astype(np.float32)),
    "np_i1_3d.npy": npy(b),
    "np_f8_v2.npy": npy(g, version=(2, 0)),
    "np_f8_v3.npy": npy(g, version=(3, 0)),
    "np_f8_0d.npy": npy(np.float64(1.5)),
    "np_f8_empty.npy": npy(np.zeros((0, 2, 4))),
    "np_f4_1d.npy": npy(np.array([1.0, -0.0, np.inf, np.nan], dtype=np.float32)),
    "np_f8_big_endian.npy": npy(g.astype(">f8")),
    "np_f8_fortran.npy": npy(np.ones((2, 3)), fortran=True),
    "np_f2.npy": npy(np.ones(3, dtype=np.float16)),
}
for name, data in seeds.items():
    put(f"npy/{name}", data)

# fuzz_forward_x: byte 0 picks d = 4 (even) or d = 8 (odd) and the weights.
put("forward_x/np_f8_d4", b"\x00" + npy(g))
put("forward_x/np_f4_d4", b"\x00" + npy(g.astype(np.float32)))
put("forward_x/np_i1_d8", b"\x01" + npy(b))
put("forward_x/np_f8_d4_large", b"\x02" + npy(g * 1e154))

# fuzz_import: byte 0 = heads - 1, three uint16 lengths, four (d, d) files.
def import_seed(heads, mats):
    files = [npy(m) for m in mats]
    return bytes([heads - 1]) + struct.pack("<3H", *(len(f) for f in files[:3])) + b"".join(files)

w4 = [rng.standard_normal((4, 4)) for _ in range(4)]
put("import/np_f8_d4_h2", import_seed(2, w4))
put("import/np_f4_d4_h1", import_seed(1, [w.astype(np.float32) for w in w4]))
put("import/np_f8_d4_h4", import_seed(4, w4))
put("import/np_f8_d2_h1", import_seed(1, [rng.standard_normal((2, 2)) for _ in range(4)]))

# Instance files written from the schema (docs/formats.md), beside the tool's:
# nested provenance, an extensions object, integers and exponents as numbers.
import json
def instance(d, k, heads, inputs, **extra):
    doc = {"format": "mhalearn.instance", "schema_version": 1, "d": d, "k": k, "m": len(heads),
           "inputs": inputs, "heads": [{"theta": t, "w": w} for t, w in heads]}
    doc.update(extra)
    return json.dumps(doc).encode()
put("instance_json/schema_d2_m1.json", instance(2, 1, [([[1, 0], [0, -1]], [[0.5, 2e-3], [1e2, -0.25]])], "boolean",
                                                provenance={"tool": "x", "options": {"a": [1, [2, {"b": None}]]}}))
put("instance_json/schema_d3_m2_ext.json", instance(
    3, 2, [(rng.standard_normal((3, 3)).tolist(), rng.standard_normal((3, 3)).tolist()) for _ in range(2)], "gaussian",
    provenance={}, extensions={"sq_family": {"q": ["1", "3/2"], "p": 0}}))
PY
echo "wrote $(find "$out" -type f | wc -l) seeds, $(du -sk "$out" | cut -f1) KiB, to $out"
