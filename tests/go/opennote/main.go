// Opens a signed note (a cosigned checkpoint) with golang.org/x/mod/sumdb/note, the Go checksum
// database's own implementation, given the log's verifier key: what any note client does. Run
// offline against Debian's copy of the module (tests/tests/api/witness.rs):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run ./tests/go/opennote <vkey> < note
//
// Prints the note's text, then one line per signature it verified ("verified <name>"), and the
// number of signature lines it did not know ("unverified <n>"); exits 1 when the note does not
// open.
package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/mod/sumdb/note"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: opennote <vkey> < note")
		os.Exit(2)
	}
	verifier, err := note.NewVerifier(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad vkey:", err)
		os.Exit(2)
	}
	msg, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	n, err := note.Open(msg, note.VerifierList(verifier))
	if err != nil {
		fmt.Fprintln(os.Stderr, "note does not open:", err)
		os.Exit(1)
	}
	fmt.Print(n.Text)
	for _, sig := range n.Sigs {
		fmt.Println("verified", sig.Name)
	}
	fmt.Println("unverified", len(n.UnverifiedSigs))
}
