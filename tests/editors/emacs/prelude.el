;;; prelude.el --- make Debian's elpa-eglot loadable under `emacs -Q --batch'  -*- lexical-binding: t -*-
;; A user's Emacs does this through package.el at start-up; -Q skips it.
(require 'package)
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(setq package-user-dir (expand-file-name "elpa" (getenv "XDG_CONFIG_HOME")))
(package-initialize)
