"""How far judges can be trusted: agreement with the experts, the judge board, the meta-evaluation."""
