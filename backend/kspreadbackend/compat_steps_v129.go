//go:build pre133

package kspreadbackend

// stepsBuilt: whether this build applies a sequence's steps (steps.go), which needs the scheduling
// queue on the sequence's clock (backend/inject/zz_kspread_queue.go, 1.33 and later).
const stepsBuilt = false
