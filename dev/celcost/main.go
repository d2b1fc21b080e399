// celcost prints v1.36.2's estimated cost (MaxCost) of DRA CEL selectors, one JSON string a line on
// standard input, for checking kspread/engine/celcost.py (dev/README.md, "CEL selectors' limits").
// Built against the vendored tree by an overlay (dev/README.md); "list" turns DRAListTypeAttributes on.
// "match" reads [string, pattern] JSON pairs instead and prints Go's regexp.MatchString (true,
// false or error), what cel-go's matches() answers.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"

	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// one line a selector: its MaxCost, or "error: " and the compile error
func main() {
	if len(os.Args) > 1 && os.Args[1] == "match" {
		match()
		return
	}
	list := len(os.Args) > 1 && os.Args[1] == "list"
	c := dracel.GetCompiler(dracel.Features{EnableListTypeAttributes: list})
	env := environment.StoredExpressions
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e string
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Println("error: bad input")
			continue
		}
		r := c.CompileCELExpression(e, dracel.Options{EnvType: &env})
		if r.Error != nil {
			b, _ := json.Marshal(r.Error.Error())
			fmt.Println("error:", string(b))
			continue
		}
		fmt.Println(r.MaxCost)
	}
}

func match() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var in [2]string
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			fmt.Println("error: bad input")
			continue
		}
		ok, err := regexp.MatchString(in[1], in[0])
		if err != nil {
			fmt.Println("error")
			continue
		}
		fmt.Println(ok)
	}
}
