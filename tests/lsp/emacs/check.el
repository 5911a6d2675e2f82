;;; check.el --- headless Emacs + eglot check of the coherence language server  -*- lexical-binding: t; -*-
;; Start the server with eglot (Debian's elpa-eglot), open textutils.py, wait until Flymake shows
;; coherence's diagnostic, hover on count_vowels, and write what Emacs got to $COHERENCE_OUT as JSON.
;; --batch loads no init file; Debian's site-start puts its elpa-* packages (eglot) on the load path.
(require 'eglot)
(require 'json)

(defvar coherence-report (list (cons 'errors nil)))
(defvar coherence-published nil "publishDiagnostics notifications eglot handled, as plists.")

(defun coherence-finish ()
  (with-temp-file (getenv "COHERENCE_OUT")
    (insert (json-encode coherence-report)))
  (kill-emacs 0))

(defvar coherence-messages nil "window/showMessage texts, newest first.")
(advice-add 'eglot-handle-notification :after
            (lambda (_server method &rest params)
              (when (eq method 'textDocument/publishDiagnostics)
                (push params coherence-published))
              (when (eq method 'window/showMessage)
                (push (plist-get params :message) coherence-messages))))

(setq eglot-server-programs
      `((python-mode . (,(getenv "COHERENCE_PY") "-m" "coherence" "serve"
                        :initializationOptions (:settings (:inputs 200 :runOn "open"))))))
(setq eglot-sync-connect 30
      eglot-connect-timeout 60
      flymake-no-changes-timeout nil)

(condition-case err
    (let* ((ws (file-name-as-directory (getenv "COHERENCE_WS")))
           (buf (find-file (concat ws "textutils.py"))))
      (with-current-buffer buf
        (push (cons 'mode (symbol-name major-mode)) coherence-report)
        (apply #'eglot (eglot--guess-contact))
        (push (cons 'managed (if (eglot-managed-p) t :json-false)) coherence-report)
        (flymake-mode 1)
        (flymake-start)
        ;; Wait (at most 90 s) for Flymake to hold a diagnostic from coherence.
        (let ((deadline (+ (float-time) 90)) (diags nil))
          (while (and (< (float-time) deadline)
                      (not (setq diags (seq-filter (lambda (d) (string-prefix-p "coherence" (flymake-diagnostic-text d)))
                                                   (flymake-diagnostics)))))
            (accept-process-output nil 0.2)
            (flymake-start))
          (push (cons 'diagnostics
                      (mapcar (lambda (d)
                                (list (cons 'line (line-number-at-pos (flymake-diagnostic-beg d)))
                                      (cons 'text (buffer-substring-no-properties (flymake-diagnostic-beg d) (flymake-diagnostic-end d)))
                                      (cons 'type (symbol-name (flymake-diagnostic-type d)))
                                      (cons 'message (flymake-diagnostic-text d))))
                              diags))
                coherence-report))
        (push (cons 'published (length coherence-published)) coherence-report)
        ;; Hover on the name of count_vowels.
        (goto-char (point-min))
        (re-search-forward "^def \\(count_vowels\\)")
        (goto-char (match-beginning 1))
        (let ((hover (jsonrpc-request (eglot-current-server) :textDocument/hover
                                      (eglot--TextDocumentPositionParams))))
          (push (cons 'hover (plist-get (plist-get hover :contents) :value)) coherence-report))
        ;; "Show alternatives", as the code action runs it: eglot 1.9 has no showDocument, so the
        ;; server says where the unified diff is.
        (let ((shown (jsonrpc-request (eglot-current-server) :workspace/executeCommand
                                      `(:command "coherence.showAlternatives"
                                        :arguments [,(eglot--path-to-uri (buffer-file-name))
                                                    ,(1- (line-number-at-pos))]))))
          (push (cons 'alternatives (length (plist-get shown :clusters))) coherence-report)
          (accept-process-output nil 0.5)
          (push (cons 'messages coherence-messages) coherence-report))
        (eglot-shutdown (eglot-current-server))
        (push (cons 'stopped t) coherence-report)))
  (error (setcdr (assq 'errors coherence-report) (list (error-message-string err)))))
(coherence-finish)
