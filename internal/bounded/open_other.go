//go:build !unix

package bounded

// openNoBlock is empty where there are no FIFOs to block on; ReadRegularFile's stat checks still apply.
const openNoBlock = 0
