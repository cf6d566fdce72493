//go:build !unix

package transcript

import "os"

// lockFile is a no-op where flock is not available: writers are then not
// protected from each other, which the package documentation states.
func lockFile(f *os.File) error { return nil }

// unlockFile is a no-op where lockFile is one.
func unlockFile(f *os.File) {}

// identOf cannot identify a file here (ok is false): a kept handle is never
// reused and a live session is always read again.
func identOf(fi os.FileInfo) fileIdent { return fileIdent{} }
