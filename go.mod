module github.com/bcfab/bcfab

go 1.26.8
