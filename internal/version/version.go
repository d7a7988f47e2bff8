// Package version holds the build's identity, set by the linker:
//
//	-X github.com/harvester/docker-machine-driver-harvester/internal/version.Version=v1.2.3
//	-X …/internal/version.Commit=<sha> -X …/internal/version.Date=<RFC 3339>
package version

var (
	// Version is the release tag, or "dev" for a local build.
	Version = "dev"
	// Commit is the git commit the binary was built from.
	Commit = "unknown"
	// Date is when the binary was built.
	Date = "unknown"
)

// String renders the identity on one line.
func String() string {
	return Version + " (commit " + Commit + ", built " + Date + ")"
}
