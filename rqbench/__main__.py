from rqbench.cli import main

raise SystemExit(main())
