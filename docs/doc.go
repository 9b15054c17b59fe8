// Package docs holds the tests of the project's documentation: the
// package map of DESIGN.md against the packages of the tree, the README's
// length, and the relative links of the Markdown files.
package docs
