"""The reference for ``python -m benchmarks.language_model --reference-python PY``.

Run by ANOTHER Python, one that has PyTorch, transformers, accelerate and gguf (never the
app's): Hugging Face's Llama with eager attention, float32, one thread, on the same GGUF
(transformers dequantises it itself). Reads a JSON request on stdin ({"gguf": path,
"ids": [[...], ...], "repeats": n, "save": path or null}) and prints one JSON line: the
best time of a forward pass with every attention for each sequence, and, when asked, the
logits and attentions saved to an .npz for comparison.

This file is never imported by the app or the tests (it imports torch).
"""

import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM

    request = json.loads(sys.stdin.read())
    torch.set_num_threads(1)
    gguf = Path(request["gguf"])
    model = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    seconds, saved = [], {}
    with torch.no_grad():
        for n, ids in enumerate(request["ids"]):
            x = torch.tensor([ids])
            out = model(x, output_attentions=True)  # warm-up, and the values kept
            best = float("inf")
            for _ in range(request["repeats"]):
                start = time.perf_counter()
                model(x, output_attentions=True)
                best = min(best, time.perf_counter() - start)
            seconds.append(best)
            if request.get("save"):
                saved[f"logits_{n}"] = out.logits[0].numpy()
                saved[f"attentions_{n}"] = torch.stack(out.attentions)[:, 0].numpy()
    if request.get("save"):
        np.savez(request["save"], **saved)
    print(json.dumps({"seconds": seconds, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
