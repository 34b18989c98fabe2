/* early.c: loads issued early.
 *
 * In each block, every tile load (and the pure scalar values its
 * subscripts need) moves up to just after the last of its operands and of
 * the stores and arrives before it (an instruction holding one counts as
 * one). The order is otherwise kept: a stable sort by (earliest slot, moved
 * first, original place). So a kernel's loads of other tensors are in
 * flight while it reduces, not issued after the reduction's barrier: a
 * LayerNorm's weight and bias in its one-pass copy (onepass.c), a Triton
 * port's RMSNorm weight after its row's sum, a SwiGLU's second operand
 * before the first one's exp and division (whose branches ptxas does not
 * move a load across). Kernels with a dot keep their order: their loads
 * feed staged buffers and rings, whose live ranges and barriers the order
 * decides (early_loads_wanted). */
#include <stdlib.h>

#include "tir.h"

typedef struct Slot {
  int key, moved, index;
  int stays; /* the instructions that stay (not moved) before it as written */
  TirInst *in;
} Slot;

static int slot_cmp(const void *x, const void *y) {
  const Slot *a = x, *b = y;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  if (a->moved != b->moved) return a->moved ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

static bool movable(const TirInst *in) {
  switch (in->op) {
  case TIR_LOAD: return in->ty.rank > 0;
  case TIR_CONST:
  case TIR_PARAM:
  case TIR_DIM:
  case TIR_CTX: return true;
  case TIR_UNARY:
  case TIR_BINARY:
  case TIR_CONVERT: return in->ty.rank == 0;
  default: return false;
  }
}

/* pinned[id]: a load written into a var, which stays where it is (outside
 * one-pass copies): a staging var is the var a load is written into whole
 * (spec 14.4), a match the planner makes in program order */
static void pin_var_inits(const TirBlock *b, bool *pinned) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    if (in->op == TIR_WRITE && in->nargs > 1 && in->args[1] && in->args[1]->op == TIR_LOAD)
      pinned[in->args[1]->id] = true;
    pin_var_inits(&in->cond, pinned);
    pin_var_inits(&in->body, pinned);
    pin_var_inits(&in->body2, pinned);
  }
}

static void hoist(Arena *a, TirBlock *b, int *where, const bool *pinned) {
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    hoist(a, &in->cond, where, pinned);
    hoist(a, &in->body, where, pinned);
    hoist(a, &in->body2, where, pinned);
  }
  if (b->len < 2) return;
  Slot *sl = arena_alloc(a, sizeof(Slot) * (size_t)b->len);
  int fence = 0, stays = 0; /* fence: the slot after the last instruction that writes memory */
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    where[in->id] = i;
    sl[i] = (Slot){.key = i, .index = i, .stays = stays, .in = in};
    if (!movable(in) || (pinned && pinned[in->id])) {
      stays++;
      if (tir_inst_writes(in)) fence = i + 1;
      continue;
    }
    int key = in->op == TIR_LOAD ? fence : 0;
    for (int k = 0; k < in->nargs + in->nsubs; k++) {
      TirInst *op = k < in->nargs ? in->args[k] : in->subs[k - in->nargs].start;
      int j = op ? where[op->id] : -1;
      if (j < 0 || j >= i || b->insts[j] != op) continue; /* defined outside this block */
      int after = sl[j].moved ? sl[j].key : j + 1;
      if (after > key) key = after;
    }
    sl[i].key = key, sl[i].moved = 1;
  }
  qsort(sl, (size_t)b->len, sizeof *sl, slot_cmp);
  /* outside one-pass copies a block is reordered only where a load passes
   * an instruction that stays (not only the scalars that move with it):
   * elsewhere its IR, plan and PTX stay as written */
  bool passes = pinned == NULL;
  for (int k = 0, n = 0; k < b->len && !passes; k++) { /* n: those that stay before slot k, sorted */
    if (!sl[k].moved) n++;
    else if (sl[k].in->op == TIR_LOAD) passes = n < sl[k].stays;
  }
  if (passes)
    for (int i = 0; i < b->len; i++) b->insts[i] = sl[i].in;
  for (int i = 0; i < b->len; i++) where[b->insts[i]->id] = -1;
}

void early_loads(Arena *a, TirFunc *f, bool all) {
  int n = f->ninsts + 1;
  int *where = arena_alloc(a, sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++) where[i] = -1;
  bool *pinned = NULL;
  if (!all) {
    pinned = arena_alloc(a, sizeof(bool) * (size_t)n);
    for (int i = 0; i < n; i++) pinned[i] = false;
    pin_var_inits(&f->body, pinned);
  }
  hoist(a, &f->body, where, pinned);
  tir_number(a, f);
}

bool early_loads_wanted(const TirFunc *f) { return !tir_has_dot(&f->body); }
