package transcript

import "github.com/cespare/xxhash/v2"

// Navigator resolves the tree of a session entry by entry, in file order:
// for each entry the parent it really hangs from and whether it moves the
// active leaf. It follows two rule sets, chosen by the header's version:
//
// Versions 1 to 3 (pi): an entry hangs from its parentId as written, and
// the active leaf is the last entry.
//
// Version 4 (OpenClaw 2026.9.6's transcript tree):
//   - a leaf entry moves the active leaf to its targetId (null: an empty
//     branch); entries chained to the leaf entry hang from that target, and
//     the next append goes to appendParentId (default: the target). A leaf
//     entry whose target or append parent is unknown is invalid and ignored;
//   - an entry with appendMode "side" is kept but does not move the leaf;
//   - entries of unknown types with an id and a parentId are kept on the
//     tree (links) but never move the leaf;
//   - a known entry with no parentId key hangs from the active leaf; one
//     whose parent is unknown, or is the last link when the leaf is
//     elsewhere, is re-hung from the active leaf;
//   - after a reset, an entry (or leaf target) outside the reset's window
//     is re-hung from the active leaf: history before a reset is reachable
//     only through the reset's firstKeptEntryId.
//
// Ids are kept as 64-bit hashes, so memory is about 40 bytes per entry.
type Navigator struct {
	v4    bool
	nodes map[uint64]navNode
	// resetDesc holds the latest reset and its descendants (v4).
	resetDesc   map[uint64]struct{}
	latestReset uint64
	leaf        uint64 // 0: none (null)
	appendP     uint64
}

type navNode struct {
	parent  uint64
	control bool // a leaf entry: skipped by paths
	invalid bool
}

// NavStep is what Navigator.Step resolved for one entry.
type NavStep struct {
	ID, Parent uint64 // hashes (IDHash); Parent 0 for a root
	InTree     bool   // false: the entry is on no branch (no usable id)
	Control    bool   // a valid leaf entry: not itself on any path
	MovesLeaf  bool   // the active leaf is now Leaf
	Leaf       uint64
}

// NewNavigator returns a Navigator for a session of the given header
// version.
func NewNavigator(version int) *Navigator {
	return &Navigator{v4: version >= 4, nodes: make(map[uint64]navNode), resetDesc: make(map[uint64]struct{})}
}

// IDHash is the hash the Navigator keeps for an id (0 for an empty id).
func IDHash(id []byte) uint64 {
	if len(id) == 0 {
		return 0
	}
	h := xxhash.Sum64(id)
	if h == 0 {
		h = 1
	}
	return h
}

// Leaf returns the hash of the active leaf (0 when none).
func (n *Navigator) Leaf() uint64 { return n.leaf }

// AppendParent returns the hash of the entry the next append hangs from.
func (n *Navigator) AppendParent() uint64 { return n.appendP }

// Parent returns the resolved parent of a known id and whether it is known.
func (n *Navigator) Parent(id uint64) (uint64, bool) {
	nd, ok := n.nodes[id]
	return nd.parent, ok
}

// IsControl reports whether id is a (valid) leaf entry.
func (n *Navigator) IsControl(id uint64) bool { return n.nodes[id].control }

func knownType(t EntryType) bool { return t != TypeUnknown && t != TypeLeaf }

// Step resolves e (the next entry in file order).
func (n *Navigator) Step(e *Entry) NavStep {
	id := IDHash(e.ID)
	if id == 0 {
		return NavStep{}
	}
	if !n.v4 {
		p := IDHash(e.ParentID)
		n.nodes[id] = navNode{parent: p}
		n.leaf, n.appendP = id, id
		return NavStep{ID: id, Parent: p, InTree: true, MovesLeaf: true, Leaf: id}
	}
	known := func(h uint64) bool {
		if h == 0 {
			return true
		}
		nd, ok := n.nodes[h]
		return ok && !nd.invalid
	}
	if e.Type == TypeLeaf {
		if e.ParentAbsent {
			return NavStep{}
		}
		target := IDHash(e.TargetID)
		appendP := target
		if e.AppendParentSet {
			appendP = IDHash(e.AppendParentID)
		}
		if n.latestReset != 0 && n.leaf != 0 {
			if _, in := n.resetDesc[target]; target == 0 || !in {
				target, appendP = n.leaf, n.leaf
			}
		}
		if !known(target) || !known(appendP) {
			n.nodes[id] = navNode{parent: IDHash(e.ParentID), invalid: true}
			return NavStep{ID: id, Parent: IDHash(e.ParentID), InTree: true}
		}
		n.nodes[id] = navNode{parent: target, control: true}
		n.addResetDesc(id, target)
		n.appendP = appendP
		n.leaf = target
		return NavStep{ID: id, Parent: target, InTree: true, Control: true, MovesLeaf: true, Leaf: target}
	}
	canonical := knownType(e.Type)
	var parent uint64
	switch {
	case !e.ParentAbsent:
		parent = IDHash(e.ParentID)
	case canonical:
		parent = n.leaf
	default:
		return NavStep{} // an unknown entry without a parentId is on no branch
	}
	if canonical && !e.AppendSide {
		_, inReset := n.resetDesc[parent]
		switch {
		case n.latestReset != 0 && (parent == 0 || !inReset):
			parent = n.leaf
		case !e.ParentAbsent && parent != 0 && !known(parent) && n.leaf != 0:
			parent = n.leaf
		case !e.ParentAbsent && parent == n.appendP && n.leaf != n.appendP:
			parent = n.leaf
		}
		parent = n.skipControls(parent)
	}
	n.nodes[id] = navNode{parent: parent}
	if e.Type == TypeReset {
		n.latestReset = id
		clear(n.resetDesc)
		n.resetDesc[id] = struct{}{}
	} else {
		n.addResetDesc(id, parent)
	}
	n.appendP = id
	st := NavStep{ID: id, Parent: parent, InTree: true}
	if canonical && !e.AppendSide {
		n.leaf = id
		st.MovesLeaf, st.Leaf = true, id
	}
	return st
}

func (n *Navigator) addResetDesc(id, parent uint64) {
	if n.latestReset == 0 || parent == 0 {
		return
	}
	if _, ok := n.resetDesc[parent]; ok {
		n.resetDesc[id] = struct{}{}
	}
}

// skipControls follows leaf entries up to the entry they stand for.
func (n *Navigator) skipControls(p uint64) uint64 {
	for steps := 0; p != 0 && steps <= len(n.nodes); steps++ {
		nd, ok := n.nodes[p]
		if !ok || !nd.control {
			return p
		}
		p = nd.parent
	}
	return p
}

// Path returns the active branch as hashes, root first, leaf controls
// left out; a missing ancestor ends it (the reachable suffix is kept) and a
// cycle empties it.
func (n *Navigator) Path() []uint64 {
	path, _ := n.path()
	return path
}

// path is Path, and false when a cycle emptied it.
func (n *Navigator) path() ([]uint64, bool) {
	var path []uint64
	seen := make(map[uint64]struct{})
	for cur := n.leaf; cur != 0; {
		if _, dup := seen[cur]; dup {
			return nil, false
		}
		seen[cur] = struct{}{}
		nd, ok := n.nodes[cur]
		if !ok {
			break
		}
		if !nd.control {
			path = append(path, cur)
		}
		cur = nd.parent
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path, true
}

// appendTracker follows, entry by entry, the id the next append hangs from
// (Navigator.AppendParent) as a string, for the writers' recovery scans:
// it is always the current entry, its target, its append parent, or what
// it was before.
type appendTracker struct {
	nav *Navigator
	id  []byte
}

func (a *appendTracker) step(e *Entry, version int) {
	if a.nav == nil {
		a.nav = NewNavigator(version)
	}
	a.nav.Step(e)
	h := a.nav.AppendParent()
	switch {
	case h == 0:
		a.id = a.id[:0]
	case h == IDHash(a.id):
	case h == IDHash(e.ID):
		a.id = append(a.id[:0], e.ID...)
	case h == IDHash(e.AppendParentID):
		a.id = append(a.id[:0], e.AppendParentID...)
	case h == IDHash(e.TargetID):
		a.id = append(a.id[:0], e.TargetID...)
	}
}
