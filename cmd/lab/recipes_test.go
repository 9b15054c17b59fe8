package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// recipe is one `bin/lab ...` line of a recipe's code block, and what its
// comment says it prints: every "quoted" text in the comment.
type recipe struct {
	args []string
	want []string
}

var quoted = regexp.MustCompile(`"([^"]+)"`)

// recipeFiles are where the recipes live, searched in this order: the
// README's five, then docs/USAGE.md's. A recipe in both must read the
// same in both.
var recipeFiles = []string{"../../README.md", "../../docs/USAGE.md"}

// readmeRecipes are the titles of the recipes TestReadmeRecipes runs: the
// flow-control capture, and the PFC deadlock caught by the watchdog and
// captured.
var readmeRecipes = []string{"With flow control:", "PFC, its deadlock, and the watchdog:"}

// readmeRecipe reads the lab commands of the recipe titled title from the
// first of recipeFiles that has it.
func readmeRecipe(t *testing.T, title string) []recipe {
	t.Helper()
	for _, f := range recipeFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if steps, found, err := parseRecipe(b, title); err != nil {
			t.Fatalf("%s: %v", f, err)
		} else if found {
			return steps
		}
	}
	t.Fatalf("no recipe %q in %s", title, strings.Join(recipeFiles, ", "))
	return nil
}

// parseRecipe reads the lab commands of the code block that follows the
// line starting with title (after a heading's #s, if any), up to its lab
// down. found says whether a line starts with title at all.
func parseRecipe(b []byte, title string) (steps []recipe, found bool, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	in := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !found:
			found = strings.HasPrefix(strings.TrimLeft(line, "# "), title)
			continue
		case !in:
			in = strings.HasPrefix(line, "```")
			continue
		case strings.HasPrefix(line, "```"):
			return steps, true, nil
		}
		if !strings.HasPrefix(line, "bin/lab ") {
			continue
		}
		cmd, comment, _ := strings.Cut(line, "#")
		r := recipe{args: strings.Fields(cmd)[1:]}
		for _, m := range quoted.FindAllStringSubmatch(comment, -1) {
			r.want = append(r.want, m[1])
		}
		steps = append(steps, r)
		if r.args[0] == "down" {
			return steps, true, nil
		}
	}
	if !found {
		return nil, false, nil
	}
	return nil, true, fmt.Errorf("no code block after %q ending in lab down", title)
}

// The recipes TestReadmeRecipes runs on real labs are where it looks for
// them, without root: each brings a lab up by --name, ends in lab down,
// and quotes what some of its lines print; a recipe that both the README
// and docs/USAGE.md show reads the same in both.
func TestReadmeRecipesFound(t *testing.T) {
	for _, title := range readmeRecipes {
		var first []recipe
		firstFile := ""
		for _, f := range recipeFiles {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			steps, found, err := parseRecipe(b, title)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if !found {
				continue
			}
			if first == nil {
				first, firstFile = steps, f
			} else if !reflect.DeepEqual(steps, first) {
				t.Errorf("recipe %q reads differently in %s and %s:\n%v\n%v", title, firstFile, f, first, steps)
			}
		}
		if first == nil {
			t.Errorf("no recipe %q in %s", title, strings.Join(recipeFiles, ", "))
			continue
		}
		wants := 0
		for _, s := range first {
			wants += len(s.want)
			named := false
			for i, a := range s.args {
				named = named || (i > 0 && s.args[i-1] == "--name" && a != "")
			}
			if !named {
				t.Errorf("%s: recipe %q: lab %s names no lab (--name)", firstFile, title, strings.Join(s.args, " "))
			}
		}
		if first[0].args[0] != "up" || first[len(first)-1].args[0] != "down" {
			t.Errorf("%s: recipe %q does not run from lab up to lab down: %v", firstFile, title, first)
		}
		if wants == 0 {
			t.Errorf("%s: recipe %q quotes nothing a command prints", firstFile, title)
		}
		t.Logf("%s: %q: %d lab commands, %d quoted outputs", firstFile, title, len(first), wants)
	}
}
