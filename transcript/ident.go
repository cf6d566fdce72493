package transcript

// fileIdent identifies a file's state: which file (device, inode) and its
// size and change times. Any write, truncation or rename over the name
// changes it. ok is false where the system gives no identity (identOf of
// lock_other.go); such a state equals no other.
type fileIdent struct {
	dev, ino, size   uint64
	mtimeNs, ctimeNs int64
	ok               bool
}
