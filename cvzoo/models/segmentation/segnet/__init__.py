"""SegNet (Badrinarayanan et al., TPAMI 2017): encoder-decoder with max-unpooling."""
