//go:build !linux

package prompt

// Elsewhere the memo's warm check stats every dependency.

type watchSet struct{}

func (m *promptMemo) arm() *watchSet { return nil }

func (m *promptMemo) watched(*watchSet, int) (current, ok bool) { return false, false }

func rearm(*watchSet) *watchSet { return nil }

const haveWatcher = false
