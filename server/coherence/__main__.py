from coherence.cli import main

raise SystemExit(main())
