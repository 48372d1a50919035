#include "tlm/OpTypes.h"

namespace scoville::tlm {

const char* opKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kRead: return "read";
    case OpKind::kWrite: return "write";
    case OpKind::kKvRead: return "kv_read";
    case OpKind::kKvAppend: return "kv_append";
    case OpKind::kGemm: return "gemm";
    case OpKind::kVector: return "vector";
    case OpKind::kSend: return "send";
    case OpKind::kLaunch: return "launch";
  }
  return "?";
}

const char* opBlockName(OpBlock block) {
  switch (block) {
    case OpBlock::kEmbedding: return "embedding";
    case OpBlock::kAttention: return "attention";
    case OpBlock::kDenseFfn: return "dense_ffn";
    case OpBlock::kMoe: return "moe";
    case OpBlock::kLmHead: return "lm_head";
    case OpBlock::kOther: return "other";
  }
  return "?";
}

}  // namespace scoville::tlm
